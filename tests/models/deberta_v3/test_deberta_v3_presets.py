"""The named DeBERTa-v3 presets: registered, aliased, the released configs,
building offline without their SentencePiece model (which comes with the
weights)."""

import pytest

import kzoo
from helpers import check_preset
from kzoo.core.tokenizer import TokenizerAssetError

# Hugging Face's DebertaV2Model counts (no pooler: DeBERTa's is the
# classifier's).
DEBERTA_V3_PRESETS = {
    "deberta_v3_extra_small_en": ("deberta_v3_xsmall", 70_682_112),
    "deberta_v3_small_en": ("deberta_v3_small", 141_304_320),
    "deberta_v3_base_en": ("deberta_v3_base", 183_831_552),
    "deberta_v3_large_en": ("deberta_v3_large", 434_012_160),
    "mdeberta_v3_base_multi": ("mdeberta_v3_base", 278_218_752),
}


def test_list_has_the_deberta_v3_presets():
    rows = {row["name"]: row
            for row in kzoo.presets.list(family="deberta_v3")}
    assert set(rows) == set(DEBERTA_V3_PRESETS)
    for name, (alias, params) in DEBERTA_V3_PRESETS.items():
        assert alias in rows[name]["aliases"]
        assert kzoo.presets.resolve(alias).name == name
        assert rows[name]["params"] == params


@pytest.mark.parametrize("name", sorted(DEBERTA_V3_PRESETS))
def test_preset_files_and_metadata(name):
    preset = check_preset(name, kzoo.DebertaV3Backbone, build=False)
    assert preset.metadata["tokenizer"]["spm.model"]["remote"]
    declared = {f["name"] for f in preset.metadata["source"]["files"]}
    assert {"spm.model", "config.json"} <= declared
    assert preset.metadata["heads"] == ["mlm_head"]


def test_preset_shapes_are_the_released_ones():
    def shape(name):
        c = kzoo.presets.resolve(name).json("config.json")["config"]
        return (c["num_layers"], c["num_heads"], c["hidden_dim"],
                c["intermediate_dim"], c["vocabulary_size"],
                c["position_buckets"], c["max_relative_positions"],
                c["share_att_key"], c["layer_norm_epsilon"])
    common = (256, 512, True, 1e-7)
    assert shape("deberta_v3_extra_small_en") == (12, 6, 384, 1536,
                                                  128100, *common)
    assert shape("deberta_v3_small_en") == (6, 12, 768, 3072, 128100,
                                            *common)
    assert shape("deberta_v3_base_en") == (12, 12, 768, 3072, 128100,
                                           *common)
    assert shape("deberta_v3_large_en") == (24, 16, 1024, 4096, 128100,
                                            *common)
    assert shape("mdeberta_v3_base_multi") == (12, 12, 768, 3072, 251000,
                                               *common)


def test_parameter_count_formula_matches_metadata():
    # Counted, not typed: token table, embedding LayerNorm, the shared
    # relative table (2 x 256 rows) and its LayerNorm, then the blocks.
    for name, (_, params) in DEBERTA_V3_PRESETS.items():
        c = kzoo.presets.resolve(name).json("config.json")["config"]
        v, h, i = c["vocabulary_size"], c["hidden_dim"], \
            c["intermediate_dim"]
        block = 4 * (h * h + h) + 4 * h + (h * i + i) + (i * h + h)
        assert v * h + 2 * h + 512 * h + 2 * h + c["num_layers"] * block \
            == params, name


def test_builds_offline_without_tokenizer_files():
    backbone = kzoo.DebertaV3Backbone.from_preset(
        "deberta_v3_base_en", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.vocabulary_size == 128100
    assert backbone.get_layer("relative_embedding").embeddings.shape \
        == (512, 16)
    task = kzoo.DebertaV3TextClassifier(backbone, num_classes=2)
    assert task.preprocessor is None


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(DEBERTA_V3_PRESETS))
def test_large_presets_build(name):
    check_preset(name, kzoo.DebertaV3Backbone)


def test_tokenizer_offline_says_what_to_do(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(TokenizerAssetError, match=(
            r"(?s)preset 'deberta_v3_base_en' does not ship its spm.model"
            r".*microsoft/deberta-v3-base.*load_weights=False")):
        kzoo.DebertaV3Tokenizer.from_preset("deberta_v3_base")
