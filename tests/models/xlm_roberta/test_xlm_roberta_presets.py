"""The named XLM-R presets: registered, aliased, the released configs and
parameter counts, building offline without their SentencePiece model
(which comes with the weights)."""

import pytest

import kzoo
from helpers import check_preset
from kzoo.core.tokenizer import TokenizerAssetError

XLMR_PRESETS = {
    # transformers' XLMRobertaModel parameter counts (pooler included).
    "xlm_roberta_base_multi": ("xlm_roberta_base", 278_043_648),
    "xlm_roberta_large_multi": ("xlm_roberta_large", 559_890_432),
}


def test_list_has_the_xlm_roberta_presets():
    rows = {row["name"]: row
            for row in kzoo.presets.list(family="xlm_roberta")}
    # (AfriBERTa and AfroXLM-R: tests/convert/test_field_presets.py.)
    assert set(XLMR_PRESETS) <= set(rows)
    for name, (alias, params) in XLMR_PRESETS.items():
        assert alias in rows[name]["aliases"]
        assert kzoo.presets.resolve(alias).name == name
        assert rows[name]["params"] == params


@pytest.mark.parametrize("name", sorted(XLMR_PRESETS))
def test_preset_files_and_metadata(name):
    preset = check_preset(name, kzoo.XLMRobertaBackbone, build=False)
    assert preset.metadata["tokenizer"]["sentencepiece.bpe.model"]["remote"]
    declared = {f["name"] for f in preset.metadata["source"]["files"]}
    assert {"sentencepiece.bpe.model", "model.safetensors"} <= declared
    assert preset.metadata["heads"] == ["mlm_head"]
    assert preset.json("tokenizer.json")["class_name"] == \
        "XLMRobertaTokenizer"


def test_preset_shapes_are_the_released_ones():
    def shape(name):
        c = kzoo.presets.resolve(name).json("config.json")["config"]
        return (c["num_layers"], c["num_heads"], c["hidden_dim"],
                c["intermediate_dim"], c["vocabulary_size"],
                c["max_sequence_length"], c["pad_token_id"],
                c["layer_norm_epsilon"])
    assert shape("xlm_roberta_base_multi") == (12, 12, 768, 3072, 250002,
                                               512, 1, 1e-5)
    assert shape("xlm_roberta_large_multi") == (24, 16, 1024, 4096, 250002,
                                                512, 1, 1e-5)


def test_parameter_count_is_the_configs():
    # The count the metadata records, from the config's formula: the
    # embeddings (250,002 tokens, 514 positions, one token type, a
    # LayerNorm), 12 blocks and the pooler.
    v, h, i, p, layers = 250002, 768, 3072, 514, 12
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    assert v * h + p * h + h + 2 * h + layers * block + h * h + h == \
        XLMR_PRESETS["xlm_roberta_base_multi"][1]


def test_builds_offline_without_the_sentencepiece_model():
    backbone = kzoo.XLMRobertaBackbone.from_preset(
        "xlm_roberta_base_multi", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.vocabulary_size == 250002
    assert backbone.get_layer("position_embedding").embeddings.shape \
        == (514, 16)


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(XLMR_PRESETS))
def test_large_presets_build(name):
    check_preset(name, kzoo.XLMRobertaBackbone)


def test_tokenizer_offline_says_what_to_do(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(TokenizerAssetError, match=(
            r"(?s)preset 'xlm_roberta_base_multi' does not ship its "
            r"sentencepiece.bpe.model; it comes with the checkpoint's "
            r"weights.*FacebookAI/xlm-roberta-base.*load_weights=False")):
        kzoo.XLMRobertaTokenizer.from_preset("xlm_roberta_base")
