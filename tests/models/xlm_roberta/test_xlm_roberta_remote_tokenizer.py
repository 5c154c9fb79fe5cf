"""A named-style XLM-R preset ships no SentencePiece model: its metadata
declares `sentencepiece.bpe.model` remote, so it is fetched from the hub
with the weights (loopback hub) and converted with them into the cache,
once; the MLM task then loads from there, head included."""

import shutil
import warnings

import pytest

import kzoo
from kzoo.core.registry import class_entry
from kzoo.utils.files import write_json
from convert_helpers import FakeHub
from xlm_roberta_testing import (HARD_TEXTS, SPM_MODEL, XLMR_PRESET,
                                 XLMR_VOCABULARY)

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

REPO = "kzoo-test/tiny-xlm-roberta"
SPM_FILE = "sentencepiece.bpe.model"
FILES = ["config.json", "model.safetensors", SPM_FILE]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    config = transformers.XLMRobertaConfig(
        vocab_size=XLMR_VOCABULARY, hidden_size=8, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=34, type_vocab_size=1, layer_norm_eps=1e-5)
    folder = tmp_path / "repo"
    transformers.XLMRobertaForMaskedLM(config).save_pretrained(folder)
    shutil.copy(SPM_MODEL, folder / SPM_FILE)
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
    backbone = kzoo.XLMRobertaBackbone(
        vocabulary_size=XLMR_VOCABULARY, num_layers=1, num_heads=2,
        hidden_dim=8, intermediate_dim=16, max_sequence_length=32)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = kzoo.XLMRobertaTokenizer()
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": "tiny_xlmr_test", "family": "xlm_roberta",
        "heads": ["mlm_head"],
        "source": {"huggingface": REPO, "revision": "main",
                   "files": [{"name": f} for f in FILES]},
        "tokenizer": {SPM_FILE: {"remote": True}}})
    return folder


def test_sentencepiece_model_comes_with_the_weights(hub, tmp_path):
    preset = named_style_preset(tmp_path / "tiny_xlmr_test")
    reference = kzoo.XLMRobertaTokenizer.from_preset(str(XLMR_PRESET))
    tokenizer = kzoo.XLMRobertaTokenizer.from_preset(str(preset))
    assert hub.fetched(SPM_FILE) == 1
    assert hub.fetched("model.safetensors") == 1
    cached = kzoo.presets.cache_dir() / "tiny_xlmr_test"
    assert tokenizer.asset_paths["proto"] == cached / SPM_FILE
    assert tokenizer(HARD_TEXTS) == reference(HARD_TEXTS)

    with warnings.catch_warnings():
        warnings.simplefilter("error", kzoo.presets.RandomHeadWarning)
        mlm = kzoo.XLMRobertaMaskedLM.from_preset(str(preset),
                                                  sequence_length=16)
    assert hub.fetched("model.safetensors") == 1
    (filled,) = mlm.fill_mask("Hello <mask>.", top_k=2)
    assert len(filled[0]) == 2
