"""The named RoBERTa presets: registered, aliased, the released configs,
building offline without their tokenizer files (which come with the
weights)."""

import pytest

import kzoo
from helpers import check_preset
from kzoo.core.tokenizer import TokenizerAssetError

ROBERTA_PRESETS = {
    "roberta_base_en": ("roberta_base", 124_645_632),
    "roberta_large_en": ("roberta_large", 355_359_744),
    "distil_roberta_base_en": ("distil_roberta_base", 82_118_400),
}


def test_list_has_the_roberta_presets():
    rows = {row["name"]: row for row in kzoo.presets.list(family="roberta")}
    assert set(rows) == set(ROBERTA_PRESETS)
    for name, (alias, params) in ROBERTA_PRESETS.items():
        assert alias in rows[name]["aliases"]
        assert kzoo.presets.resolve(alias).name == name
        # Hugging Face's RobertaModel counts (pooler included).
        assert rows[name]["params"] == params


@pytest.mark.parametrize("name", sorted(ROBERTA_PRESETS))
def test_preset_files_and_metadata(name):
    preset = check_preset(name, kzoo.RobertaBackbone, build=False)
    records = preset.metadata["tokenizer"]
    assert records["vocab.json"]["remote"] and records["merges.txt"]["remote"]
    declared = {f["name"] for f in preset.metadata["source"]["files"]}
    assert {"vocab.json", "merges.txt", "model.safetensors"} <= declared
    assert preset.metadata["heads"] == ["mlm_head"]


def test_preset_shapes_are_the_released_ones():
    def shape(name):
        c = kzoo.presets.resolve(name).json("config.json")["config"]
        return (c["num_layers"], c["num_heads"], c["hidden_dim"],
                c["intermediate_dim"], c["vocabulary_size"],
                c["max_sequence_length"], c["pad_token_id"],
                c["layer_norm_epsilon"])
    assert shape("roberta_base_en") == (12, 12, 768, 3072, 50265, 512, 1, 1e-5)
    assert shape("roberta_large_en") == (24, 16, 1024, 4096, 50265, 512, 1,
                                         1e-5)
    assert shape("distil_roberta_base_en") == (6, 12, 768, 3072, 50265, 512,
                                               1, 1e-5)


def test_builds_offline_without_tokenizer_files():
    # The named preset's config, shrunk (building 82M-355M random
    # parameters is `large`, below); no tokenizer file is needed.
    backbone = kzoo.RobertaBackbone.from_preset(
        "distil_roberta_base_en", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.vocabulary_size == 50265
    assert backbone.get_layer("position_embedding").embeddings.shape \
        == (514, 16)
    task = kzoo.RobertaTextClassifier(backbone, num_classes=2)
    assert task.preprocessor is None


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(ROBERTA_PRESETS))
def test_large_presets_build(name):
    check_preset(name, kzoo.RobertaBackbone)


def test_tokenizer_offline_says_what_to_do(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(TokenizerAssetError, match=(
            r"(?s)preset 'roberta_base_en' does not ship its vocab.json; it "
            r"comes with the checkpoint's weights.*FacebookAI/roberta-base"
            r".*load_weights=False")):
        kzoo.RobertaTokenizer.from_preset("roberta_base")
