"""A named-style RoBERTa preset ships no tokenizer files: its metadata
declares vocab.json and merges.txt remote, so the tokenizer is fetched
from the hub with the weights (loopback hub, tests/convert/convert_helpers)
and converted with them into the cache, once; the whole task then loads
from there, MLM head included."""

import shutil
import warnings
import pytest

import kzoo
from kzoo.core.registry import class_entry
from kzoo.utils.files import write_json
from convert_helpers import FakeHub
from roberta_testing import HARD_TEXTS, ROBERTA_PRESET

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")
pytest.importorskip("torch")

REPO = "kzoo-test/tiny-roberta"
FILES = ["config.json", "model.safetensors", "vocab.json", "merges.txt"]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    """The loopback hub holding a tiny RobertaForMaskedLM with the
    RoBERTa-format tokenizer files."""
    config = transformers.RobertaConfig(
        vocab_size=50262, hidden_size=8, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=34, type_vocab_size=1, layer_norm_eps=1e-5)
    folder = tmp_path / "repo"
    transformers.RobertaForMaskedLM(config).save_pretrained(folder)
    for name in ("vocab.json", "merges.txt"):
        shutil.copy(f"{ROBERTA_PRESET}/{name}", folder / name)
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
    backbone = kzoo.RobertaBackbone(
        vocabulary_size=50262, num_layers=1, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=32, name="roberta_backbone")
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = kzoo.RobertaTokenizer()
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": "tiny_roberta_test", "family": "roberta", "heads": ["mlm_head"],
        "source": {"huggingface": REPO, "revision": "main",
                   "files": [{"name": f} for f in FILES]},
        "tokenizer": {"vocab.json": {"remote": True},
                      "merges.txt": {"remote": True}}})
    return folder


def test_tokenizer_comes_with_the_weights(hub, tmp_path):
    preset = named_style_preset(tmp_path / "tiny_roberta_test")
    reference = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    tokenizer = kzoo.RobertaTokenizer.from_preset(str(preset))
    assert hub.fetched("vocab.json") == 1 and hub.fetched(
        "model.safetensors") == 1
    cached = kzoo.presets.cache_dir() / "tiny_roberta_test"
    assert tokenizer.asset_paths["vocabulary"].parent == cached
    assert tokenizer(HARD_TEXTS) == reference(HARD_TEXTS)

    # The task finds weights and tokenizer in the cache: nothing fetched
    # again, and the pretrained MLM head came along.
    with warnings.catch_warnings():
        warnings.simplefilter("error", kzoo.presets.RandomHeadWarning)
        mlm = kzoo.RobertaMaskedLM.from_preset(str(preset),
                                               sequence_length=16)
    assert hub.fetched("model.safetensors") == 1
    (filled,) = mlm.fill_mask("Hello <mask>.", top_k=2)
    assert len(filled[0]) == 2
