"""The named DeBERTa-v3 presets: registered, aliased, the released configs,
building offline without their SentencePiece model (which comes with the
weights)."""

import json
import warnings

import pytest

import kzoo
from deberta_v3_testing import DEBERTA_PRESET, make_tiny_deberta
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
    # The released checkpoints are RTD discriminators: no masked-LM head.
    assert preset.metadata["heads"] == []
    assert "replaced-token detection" in preset.metadata["heads_note"]
    assert "--task backbone" in preset.metadata["source"]["how_to_get"]


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


@pytest.fixture
def rtd_checkpoint(tmp_path):
    """A local preset shaped like a converted DeBERTa-v3 checkpoint: a
    backbone with weights, the metadata of the named presets."""
    folder = tmp_path / "v3"
    make_tiny_deberta(max_sequence_length=512).save_to_preset(folder)
    kzoo.DebertaV3Tokenizer.from_preset(DEBERTA_PRESET).save_to_preset(folder)
    named = kzoo.presets.resolve("deberta_v3_base_en").metadata
    metadata = json.loads((folder / "metadata.json").read_text())
    metadata.update(heads=named["heads"], heads_note=named["heads_note"])
    (folder / "metadata.json").write_text(json.dumps(metadata))
    return folder


def test_a_masked_lm_on_a_v3_checkpoint_says_its_head_is_random(
        rtd_checkpoint):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kzoo.DebertaV3MaskedLM.from_preset(str(rtd_checkpoint),
                                           sequence_length=16)
    said = [str(w.message) for w in caught
            if issubclass(w.category, kzoo.presets.RandomHeadWarning)]
    assert len(said) == 1 and "mlm_head" in said[0] and \
        "replaced-token detection" in said[0]


def test_fill_mask_refuses_a_v3_checkpoint(rtd_checkpoint, capsys):
    from kzoo import cli
    code = cli.main(["fill-mask", str(rtd_checkpoint), "a [MASK] b"])
    out, err = capsys.readouterr()
    assert code == 1 and not out
    assert "needs a pretrained masked-LM head" in err and \
        "replaced-token detection" in err


def test_the_download_converts_the_encoder_alone(monkeypatch, tmp_path):
    from kzoo.convert import hub
    tasks = []
    monkeypatch.setattr(hub, "hf_to_preset",
                        lambda *args, task, **kwargs: tasks.append(task))
    for name in ("deberta_v3_base_en", "bert_base_en_uncased"):
        hub._convert_for_preset(kzoo.presets.resolve(name), tmp_path,
                                tmp_path / name, False, {})
    assert tasks == ["backbone", "pretraining"]
