"""Pretrained heads come with a preset: a task built on a checkpoint that
has an MLM (and NSP) head gets it, checked against `transformers` through
a Hugging Face hub served from 127.0.0.1; a head the checkpoint should have
had and did not is an error or a warning that names it; a saved task
stores each weight once."""

import warnings

import h5py
import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.utils.files import write_json

from convert_helpers import FakeHub, make_hf_bert, save_hf

import torch
import transformers

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

REPO = "kzoo-test/tiny-bert-pretraining"
PROMPTS = ["w3 w7 [MASK] w9 w11", "w20 [MASK] w5"]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf")
    pretraining = make_hf_bert("BertForPreTraining", "odd36", seed=3)
    bare = make_hf_bert("BertModel", "odd36", seed=4)
    return {"pretraining": (pretraining, save_hf(pretraining,
                                                 root / "pretraining")),
            "bare": (bare, save_hf(bare, root / "bare"))}


def _named_preset(tmp_path, hf_folder, repo, heads):
    """A folder like the shipped presets: config, tokenizer and metadata
    declaring the hub source (and the heads it provides), no weights."""
    from kzoo.convert import hf_to_preset
    scratch = tmp_path / "scratch"
    hf_to_preset(hf_folder, scratch, task="backbone", verbose=False)
    folder = tmp_path / "tiny_named"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "vocab.txt",
                 "preprocessor.json"):
        (folder / name).write_bytes((scratch / name).read_bytes())
    metadata = {"name": "tiny_named", "family": "bert",
                "source": {"huggingface": repo, "revision": "main",
                           "files": [{"name": "config.json"},
                                     {"name": "model.safetensors"}]}}
    if heads:
        metadata["heads"] = heads
    write_json(folder / "metadata.json", metadata)
    return folder


@pytest.fixture
def hub(tmp_path, checkpoints, monkeypatch):
    hub = FakeHub(tmp_path / "hub")
    hub.add_repo(REPO, checkpoints["pretraining"][1])
    hub.add_repo(REPO + "-bare", checkpoints["bare"][1])
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    yield hub
    hub.stop()


def test_fill_mask_matches_the_transformers_pipeline(hub, checkpoints,
                                                     tmp_path):
    _, hf_folder = checkpoints["pretraining"]
    preset = _named_preset(tmp_path, hf_folder, REPO,
                           heads=["mlm_head", "nsp_head"])
    with warnings.catch_warnings():
        warnings.simplefilter("error", presets.RandomHeadWarning)
        mlm = kzoo.BertMaskedLM.from_preset(str(preset), sequence_length=16)
    got = mlm.fill_mask(PROMPTS, top_k=5)

    reference = transformers.BertForMaskedLM.from_pretrained(
        hf_folder, attn_implementation="eager").eval()
    fill = transformers.pipeline(
        "fill-mask", model=reference,
        tokenizer=transformers.BertTokenizer.from_pretrained(hf_folder),
        device="cpu")
    for prompt, (per_mask,) in zip(PROMPTS, got):
        expected = fill(prompt, top_k=5)
        assert [t for t, _ in per_mask] == [e["token_str"] for e in expected]
        np.testing.assert_allclose([p for _, p in per_mask],
                                   [e["score"] for e in expected],
                                   rtol=1e-4, atol=1e-6)


def test_pretrainer_gets_the_nsp_head_too(hub, checkpoints, tmp_path):
    hf_model, hf_folder = checkpoints["pretraining"]
    preset = _named_preset(tmp_path, hf_folder, REPO,
                           heads=["mlm_head", "nsp_head"])
    pretrainer = kzoo.BertPretrainer.from_preset(str(preset),
                                                 preprocessor=None)
    rng = np.random.default_rng(0)
    ids = rng.integers(0, hf_model.config.vocab_size, (2, 9)).astype("int32")
    segments = np.zeros_like(ids)
    mask = np.ones_like(ids)
    out = pretrainer.predict_on_batch({
        "token_ids": ids, "segment_ids": segments, "padding_mask": mask,
        "mask_positions": np.tile(np.arange(9, dtype="int32"), (2, 1))})
    with torch.no_grad():
        expected = hf_model(input_ids=torch.tensor(ids).long(),
                            token_type_ids=torch.tensor(segments).long(),
                            attention_mask=torch.tensor(mask).long())
    np.testing.assert_allclose(np.asarray(out["nsp"]),
                               expected.seq_relationship_logits.numpy(),
                               atol=1e-5)
    np.testing.assert_allclose(np.asarray(out["mlm"]),
                               expected.prediction_logits.numpy(), atol=1e-4)


def test_a_promised_head_that_is_missing_is_an_error(hub, checkpoints,
                                                     tmp_path):
    _, hf_folder = checkpoints["bare"]
    preset = _named_preset(tmp_path, hf_folder, REPO + "-bare",
                           heads=["mlm_head"])
    with pytest.raises(presets.PresetError, match="provides pretrained "
                       "mlm_head but its weights hold none"):
        kzoo.BertMaskedLM.from_preset(str(preset), preprocessor=None)


def test_an_unpromised_missing_head_warns_by_name(hub, checkpoints,
                                                  tmp_path):
    _, hf_folder = checkpoints["bare"]
    preset = _named_preset(tmp_path, hf_folder, REPO + "-bare", heads=None)
    with pytest.warns(presets.RandomHeadWarning,
                      match="BertMaskedLM.mlm_head is randomly initialised"):
        kzoo.BertMaskedLM.from_preset(str(preset), preprocessor=None)
    # A new head (a classifier) is expected to start random: no warning.
    with warnings.catch_warnings():
        warnings.simplefilter("error", presets.RandomHeadWarning)
        kzoo.BertTextClassifier.from_preset(str(preset), num_classes=2,
                                            preprocessor=None)


def test_a_saved_task_stores_each_weight_once(tmp_path):
    backbone = kzoo.BertBackbone(
        vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16)
    task = kzoo.BertPretrainer(backbone=backbone)
    task.save_to_preset(tmp_path / "saved")
    with h5py.File(tmp_path / "saved" / presets.TASK_WEIGHTS) as f:
        keys = []
        f.visititems(lambda name, obj: keys.append(name)
                     if isinstance(obj, h5py.Dataset) else None)
    assert sorted(keys) == [
        "mlm_head/bias", "mlm_head/layer_norm/beta",
        "mlm_head/layer_norm/gamma", "mlm_head/transform/bias",
        "mlm_head/transform/kernel", "nsp_head/bias", "nsp_head/kernel"]
    # The MLM head of the saved pretrainer fills a BertMaskedLM.
    mlm = kzoo.BertMaskedLM.from_preset(tmp_path / "saved", preprocessor=None)
    for a, b in zip(task.mlm_head.weights, mlm.mlm_head.weights):
        np.testing.assert_array_equal(np.asarray(a.numpy()),
                                      np.asarray(b.numpy()))
