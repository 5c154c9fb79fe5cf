"""A named-style ALBERT preset ships no spiece.model: its metadata
declares it remote, so it is fetched from the hub with the weights
(loopback hub, tests/convert/convert_helpers) and converted with them into
the cache, once; the masked LM then loads from there with its MLM head,
and the pretrainer says its SOP head is new (the hub checkpoints are
AlbertForMaskedLM, without one)."""

import shutil
import warnings

import pytest

import kzoo
from kzoo.core.registry import class_entry
from kzoo.utils.files import write_json
from convert_helpers import FakeHub
from albert_testing import ALBERT_SPM, ALBERT_VOCABULARY, HARD_TEXTS

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

REPO = "kzoo-test/tiny-albert"
FILES = ["config.json", "model.safetensors", "spiece.model"]
SHAPE = dict(num_layers=2, num_heads=2, hidden_dim=8, intermediate_dim=16,
             embedding_dim=4, max_sequence_length=32)


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The loopback hub holding a tiny AlbertForMaskedLM with the
    stand-in spiece.model."""
    config = transformers.AlbertConfig(
        vocab_size=ALBERT_VOCABULARY, embedding_size=4, hidden_size=8,
        num_hidden_layers=2, num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=32)
    folder = tmp_path / "repo"
    transformers.AlbertForMaskedLM(config).save_pretrained(folder)
    shutil.copy(ALBERT_SPM, folder / "spiece.model")
    hub = FakeHub(tmp_path / "hub")
    hub.add_repo(REPO, folder)
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    yield hub
    hub.stop()


def named_style_preset(folder):
    """config.json, tokenizer.json and metadata.json only, as
    scripts/make_presets.py writes them."""
    folder.mkdir()
    backbone = kzoo.AlbertBackbone(vocabulary_size=ALBERT_VOCABULARY,
                                   name="albert_backbone", **SHAPE)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = kzoo.AlbertTokenizer()
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": "tiny_albert_test", "family": "albert", "heads": ["mlm_head"],
        "source": {"huggingface": REPO, "revision": "main",
                   "files": [{"name": f} for f in FILES]},
        "tokenizer": {"spiece.model": {"remote": True}}})
    return folder


def test_spiece_model_comes_with_the_weights(hub, tmp_path):
    preset = named_style_preset(tmp_path / "tiny_albert_test")
    reference = kzoo.AlbertTokenizer(ALBERT_SPM)
    tokenizer = kzoo.AlbertTokenizer.from_preset(str(preset))
    assert hub.fetched("spiece.model") == 1 and hub.fetched(
        "model.safetensors") == 1
    cached = kzoo.presets.cache_dir() / "tiny_albert_test"
    assert tokenizer.asset_paths["proto"].parent == cached
    assert tokenizer(HARD_TEXTS) == reference(HARD_TEXTS)

    # The tasks find weights and tokenizer in the cache: nothing fetched
    # again; the MLM head came along, the SOP head did not exist.
    with warnings.catch_warnings():
        warnings.simplefilter("error", kzoo.presets.RandomHeadWarning)
        mlm = kzoo.AlbertMaskedLM.from_preset(str(preset),
                                              sequence_length=16)
    assert hub.fetched("model.safetensors") == 1
    (filled,) = mlm.fill_mask("Hello [MASK].", top_k=2)
    assert len(filled[0]) == 2
    with pytest.warns(kzoo.presets.RandomHeadWarning, match="sop_head"):
        kzoo.AlbertPretrainer.from_preset(str(preset), sequence_length=16)
