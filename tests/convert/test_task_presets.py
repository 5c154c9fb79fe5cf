"""Presets of a task (issue 49): LaBSE's sentence embedder and FinBERT's
sentiment classifier. Each ships task.json (the task and its arguments);
`from_preset` downloads the files its metadata lists from a hub (served
from 127.0.0.1) laid out as the real repository, converts the checkpoint
to that task, head included, and gives `transformers`' numbers:
LaBSE's as sentence-transformers computes them (Transformer -> Pooling
([CLS]) -> Dense (tanh) -> Normalize, its modules written out in torch
here), FinBERT's as BertForSequenceClassification. The checkpoints are
random, with the real positions (and FinBERT's vocabulary) on a narrow,
one-layer body; the real configs map to the presets' exactly."""

import json
import shutil

import numpy as np
import pytest

import kzoo
from kzoo.convert import converter_for_model_type
from kzoo.utils.files import read_json, write_json
from convert_helpers import FakeHub

import torch
import transformers

pytestmark = pytest.mark.once

NARROW = dict(hidden_size=16, num_hidden_layers=1, num_attention_heads=2,
              intermediate_size=24)
BERT_BASE = dict(
    model_type="bert", hidden_size=768, num_hidden_layers=12,
    num_attention_heads=12, intermediate_size=3072, hidden_act="gelu",
    hidden_dropout_prob=0.1, attention_probs_dropout_prob=0.1,
    max_position_embeddings=512, type_vocab_size=2, initializer_range=0.02,
    layer_norm_eps=1e-12, pad_token_id=0)
# The hub repositories' config.json (the fields that set the architecture).
LABSE = dict(BERT_BASE, vocab_size=501153, architectures=["BertModel"])
FINBERT = dict(BERT_BASE, vocab_size=30522,
               architectures=["BertForSequenceClassification"],
               id2label={"0": "positive", "1": "negative", "2": "neutral"},
               label2id={"positive": 0, "negative": 1, "neutral": 2})
# sentence-transformers' modules.json of LaBSE.
LABSE_MODULES = [
    {"idx": 0, "name": "0", "path": "",
     "type": "sentence_transformers.models.Transformer"},
    {"idx": 1, "name": "1", "path": "1_Pooling",
     "type": "sentence_transformers.models.Pooling"},
    {"idx": 2, "name": "2", "path": "2_Dense",
     "type": "sentence_transformers.models.Dense"},
    {"idx": 3, "name": "3", "path": "3_Normalize",
     "type": "sentence_transformers.models.Normalize"},
]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    hub = FakeHub(tmp_path / "hub")
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    yield hub
    hub.stop()


def narrow_copy(named, folder, repo, hf_model, task_config=None):
    """The named preset's folder, its config narrowed to `hf_model`'s and
    its source pointed at `repo`: the same task, tokenizer and file list."""
    preset = kzoo.presets.resolve(named)
    folder.mkdir()
    backbone = kzoo.BertBackbone(
        **converter_for_model_type("bert").backbone_kwargs(
            hf_model.config.to_dict()))
    write_json(folder / "config.json", backbone.config_entry())
    shutil.copy(preset.file("tokenizer.json"), folder / "tokenizer.json")
    task = preset.json("task.json")
    task["config"].update(task_config or {})
    write_json(folder / "task.json", task)
    metadata = dict(preset.metadata, name=folder.name)
    metadata["source"] = dict(metadata["source"], huggingface=repo)
    write_json(folder / "metadata.json", metadata)
    return folder


def random_bert(architecture, config):
    config = transformers.BertConfig(**{**config, **NARROW})
    config._attn_implementation = "eager"
    torch.manual_seed(0)
    return getattr(transformers, architecture)(config).eval()


def batch(vocabulary_size):
    rng = np.random.default_rng(0)
    ids = rng.integers(5, vocabulary_size, (2, 7)).astype("int32")
    ids[:, 0], ids[0, -1] = 2, vocabulary_size - 1
    mask = np.ones_like(ids)
    mask[1, 4:] = 0
    return {"token_ids": ids, "segment_ids": np.zeros_like(ids),
            "padding_mask": mask}


def torch_inputs(inputs):
    return dict(input_ids=torch.tensor(inputs["token_ids"]).long(),
                token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
                attention_mask=torch.tensor(inputs["padding_mask"]).long())


def test_labse_embeds_as_sentence_transformers(hub, tmp_path):
    # A small vocabulary: 501,153 rows made this test 20 s (the mapping
    # of the real config is checked below).
    model = random_bert("BertModel", dict(LABSE, vocab_size=600))
    repo = tmp_path / "repo"
    # As the hub's LaBSE lists it: pytorch_model.bin.
    model.config.save_pretrained(repo)
    torch.save(model.state_dict(), repo / "pytorch_model.bin")
    special = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    (repo / "vocab.txt").write_text("\n".join(special + [
        f"w{i}" for i in range(600 - len(special))]) + "\n")
    (repo / "modules.json").write_text(json.dumps(LABSE_MODULES))
    (repo / "1_Pooling").mkdir()
    (repo / "1_Pooling/config.json").write_text(json.dumps({
        "word_embedding_dimension": 16, "pooling_mode_cls_token": True,
        "pooling_mode_mean_tokens": False, "pooling_mode_max_tokens": False,
        "pooling_mode_mean_sqrt_len_tokens": False}))
    (repo / "2_Dense").mkdir()
    (repo / "2_Dense/config.json").write_text(json.dumps({
        "in_features": 16, "out_features": 16, "bias": True,
        "activation_function": "torch.nn.modules.activation.Tanh"}))
    torch.manual_seed(1)
    dense = torch.nn.Linear(16, 16)
    torch.save({"linear.weight": dense.weight.detach().clone(),
                "linear.bias": dense.bias.detach().clone()},
               repo / "2_Dense/pytorch_model.bin")
    hub.add_repo("kzoo-test/labse", repo)
    preset = narrow_copy("labse_base_multi", tmp_path / "tiny_labse",
                         "kzoo-test/labse", model, {"dense_dim": 16})

    embedder = kzoo.BertTextEmbedder.from_preset(str(preset),
                                                 preprocessor=None)
    assert (embedder.pooling, embedder.dense_dim, embedder.dense_activation,
            embedder.normalize) == ("cls", 16, "tanh", True)
    assert hub.fetched("2_Dense/pytorch_model.bin") == 1
    inputs = batch(600)
    got = np.asarray(embedder.predict_on_batch(inputs))
    # sentence-transformers' modules after the Transformer, by hand.
    with torch.no_grad():
        cls = model(**torch_inputs(inputs)).last_hidden_state[:, 0]
        expected = torch.nn.functional.normalize(
            torch.tanh(dense(cls)), p=2, dim=1).numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)
    np.testing.assert_allclose(np.linalg.norm(got, axis=1), 1.0, atol=1e-6)


def test_finbert_classifies_as_transformers(hub, tmp_path):
    model = random_bert("BertForSequenceClassification", FINBERT)
    repo = tmp_path / "repo"
    model.save_pretrained(repo)
    shutil.copy(kzoo.presets.resolve("bert_base_en_uncased").file(
        "vocab.txt"), repo / "vocab.txt")
    hub.add_repo("kzoo-test/finbert", repo)
    preset = narrow_copy("finbert_base_en_uncased", tmp_path / "tiny_finbert",
                         "kzoo-test/finbert", model)

    classifier = kzoo.BertTextClassifier.from_preset(str(preset),
                                                     preprocessor=None)
    assert classifier.num_classes == 3
    inputs = batch(FINBERT["vocab_size"])
    got = np.asarray(classifier.predict_on_batch(inputs))
    with torch.no_grad():
        expected = model(**torch_inputs(inputs)).logits.numpy()
    np.testing.assert_allclose(got, expected, atol=1e-5)
    cached = kzoo.presets.cache_dir() / "tiny_finbert"
    assert read_json(cached / "metadata.json")["labels"] == \
        kzoo.presets.resolve("finbert").metadata["labels"]


@pytest.mark.parametrize("name,hub_config", [
    ("labse_base_multi", LABSE), ("finbert_base_en_uncased", FINBERT)])
def test_hub_config_maps_to_the_preset_config(name, hub_config):
    expected = dict(kzoo.presets.resolve(name).json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        expected.pop(key)
    kwargs = converter_for_model_type("bert").backbone_kwargs(hub_config)
    assert {key: kwargs.get(key) for key in expected} == expected


def test_metadata_names_task_source_licence_and_heads():
    labse = kzoo.presets.resolve("labse")
    assert labse.metadata["task_class_name"] == "BertTextEmbedder"
    assert labse.metadata["license"] == "Apache-2.0"
    assert labse.metadata["heads"] == ["dense"]
    assert labse.metadata["source"]["huggingface"] == \
        "sentence-transformers/LaBSE"
    assert labse.metadata["tokenizer"]["vocab.txt"]["remote"]
    finbert = kzoo.presets.resolve("finbert")
    assert finbert.metadata["task_class_name"] == "BertTextClassifier"
    assert finbert.metadata["license"].startswith("unknown")
    assert finbert.metadata["heads"] == ["classifier"]
    assert finbert.metadata["labels"] == {
        "0": "positive", "1": "negative", "2": "neutral"}
    # bert-base-uncased's vocabulary, shipped once.
    tokenizer = kzoo.BertTokenizer.from_preset("finbert")
    assert tokenizer.lowercase and tokenizer.vocabulary_size == 30522
