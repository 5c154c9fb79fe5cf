"""The named ALBERT presets: registered, aliased, the released v2
configs, parameter counts by Hugging Face's formula, building offline
without their SentencePiece model (which comes with the weights)."""

import pytest

import kzoo
from albert_testing import ALBERT_PRESET
from helpers import check_preset
from kzoo.core.tokenizer import TokenizerAssetError

# name: (alias, (layers, heads, hidden, intermediate))
ALBERT_PRESETS = {
    "albert_base_en_uncased": ("albert_base", (12, 12, 768, 3072)),
    "albert_large_en_uncased": ("albert_large", (24, 16, 1024, 4096)),
    "albert_extra_large_en_uncased": ("albert_extra_large",
                                      (24, 16, 2048, 8192)),
    "albert_extra_extra_large_en_uncased": ("albert_extra_extra_large",
                                            (12, 64, 4096, 16384)),
}


def hf_albert_model_params(hidden, intermediate, vocab=30000, embedding=128,
                           positions=512, types=2):
    """transformers' AlbertModel parameter count: embeddings (and their
    LayerNorm) at the embedding width, the mapping to hidden, ONE block
    (shared by every layer), the pooler."""
    embeddings = (vocab + positions + types) * embedding + 2 * embedding
    mapping = embedding * hidden + hidden
    block = (4 * (hidden * hidden + hidden) + 2 * 2 * hidden
             + hidden * intermediate + intermediate
             + intermediate * hidden + hidden)
    pooler = hidden * hidden + hidden
    return embeddings + mapping + block + pooler


def test_list_has_the_albert_presets():
    rows = {row["name"]: row for row in kzoo.presets.list(family="albert")}
    assert set(rows) == set(ALBERT_PRESETS)
    for name, (alias, (_, _, hidden, intermediate)) in \
            ALBERT_PRESETS.items():
        assert alias in rows[name]["aliases"]
        assert kzoo.presets.resolve(alias).name == name
        assert rows[name]["params"] == hf_albert_model_params(
            hidden, intermediate)
    # Hugging Face's published sizes: 11.7M, 17.7M, 58.7M, 222.6M.
    assert rows["albert_base_en_uncased"]["params"] == 11_683_584
    assert rows["albert_extra_extra_large_en_uncased"]["params"] == \
        222_595_584


@pytest.mark.parametrize("name", sorted(ALBERT_PRESETS))
def test_preset_files_and_metadata(name):
    preset = check_preset(name, kzoo.AlbertBackbone, build=False)
    assert preset.metadata["tokenizer"]["spiece.model"]["remote"]
    declared = {f["name"] for f in preset.metadata["source"]["files"]}
    assert {"spiece.model", "model.safetensors"} <= declared
    # The hub checkpoints are AlbertForMaskedLM: no SOP head to promise.
    assert preset.metadata["heads"] == ["mlm_head"]


@pytest.mark.parametrize("name", sorted(ALBERT_PRESETS))
def test_preset_configs_are_the_released_v2_ones(name):
    c = kzoo.presets.resolve(name).json("config.json")["config"]
    _, shape = ALBERT_PRESETS[name]
    assert (c["num_layers"], c["num_heads"], c["hidden_dim"],
            c["intermediate_dim"]) == shape
    assert (c["vocabulary_size"], c["embedding_dim"], c["num_groups"],
            c["num_inner_repetitions"], c["max_sequence_length"],
            c["num_segments"], c["activation"], c["dropout"],
            c["attention_dropout"], c["layer_norm_epsilon"]) == (
        30000, 128, 1, 1, 512, 2, "gelu_new", 0.0, 0.0, 1e-12)


def test_builds_offline_without_tokenizer_files():
    backbone = kzoo.AlbertBackbone.from_preset(
        "albert_base_en_uncased", load_weights=False, num_layers=2,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    assert backbone.vocabulary_size == 30000
    assert backbone.get_layer("token_embedding").embeddings.shape == \
        (30000, 128)
    task = kzoo.AlbertTextClassifier(backbone, num_classes=2)
    assert task.preprocessor is None


def test_stand_in_preset_tokenizes():
    # The tests' stand-in: the named preset's config and tokenizer config
    # with a real-format spiece.model.
    from kzoo.utils.files import sha256_of
    preset = kzoo.presets.resolve(ALBERT_PRESET)
    tokenizer = kzoo.AlbertTokenizer.from_preset(ALBERT_PRESET)
    assert tokenizer.lowercase and not tokenizer.keep_accents
    record = preset.metadata["tokenizer"]["spiece.model"]
    assert sha256_of(preset.file("spiece.model")) == record["sha256"]
    assert preset.json("config.json") == kzoo.presets.resolve(
        "albert_base_en_uncased").json("config.json")


@pytest.mark.large
@pytest.mark.parametrize("name", sorted(ALBERT_PRESETS))
def test_large_presets_build(name):
    check_preset(name, kzoo.AlbertBackbone)


def test_tokenizer_offline_says_what_to_do(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(TokenizerAssetError, match=(
            r"(?s)preset 'albert_base_en_uncased' does not ship its "
            r"spiece.model; it comes with the checkpoint's weights.*"
            r"albert/albert-base-v2.*load_weights=False")):
        kzoo.AlbertTokenizer.from_preset("albert_base")
