"""kzoo vs Hugging Face `transformers` on the same random checkpoint:
sequence output, pooled output and every head's logits within 1e-5 (fp32),
on whichever backend KERAS_BACKEND names; and the round trip
HF -> kzoo -> HF gives back the original tensors exactly."""

import pytest

import kzoo
from kzoo.convert import load_hf_weights
from kzoo.convert.safetensors import load_file

from convert_helpers import ARCHITECTURES, CONFIGS, KZOO_CLASS, save_hf
from parity_harness import (check_conversion, kzoo_outputs,
                            max_abs_differences, save_checkpoints)

import torch

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

ATOL = 1e-5
CASES = [(arch, config) for config in ("odd36", "odd20")
         for arch in ARCHITECTURES]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    """Each (architecture, config) saved once, with its reference outputs."""
    return save_checkpoints(tmp_path_factory.mktemp("hf"), CASES, CONFIGS,
                            save=save_hf)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"cls.predictions.decoder.weight",
              "cls.predictions.decoder.bias"},
        skipped=("position_ids", "token_type_ids"))

    backbone = getattr(model, "backbone", model)
    # The config fields that change the numbers all came across.
    assert backbone.num_segments == hf_config.type_vocab_size
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    assert backbone.activation == hf_config.hidden_act
    assert backbone.dropout == hf_config.hidden_dropout_prob
    assert backbone.attention_dropout == hf_config.attention_probs_dropout_prob
    assert backbone.max_sequence_length == hf_config.max_position_embeddings
    if arch == "BertForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        expected_dropout = (hf_config.classifier_dropout
                            if hf_config.classifier_dropout is not None
                            else hf_config.hidden_dropout_prob)
        assert model.dropout == expected_dropout


def test_unprefixed_and_legacy_names_and_sharded(checkpoints, tmp_path):
    """Task checkpoints without the `bert.` prefix, TF-era LayerNorm
    `gamma`/`beta` names, and a sharded safetensors index all load."""
    from kzoo.convert.safetensors import save_file
    hf_model, folder, inputs, expected = checkpoints["BertForMaskedLM", "odd36"]
    tensors = load_file(folder / "model.safetensors")
    renamed = {}
    for name, value in tensors.items():
        name = name.removeprefix("bert.")
        name = name.replace("LayerNorm.weight", "LayerNorm.gamma")
        name = name.replace("LayerNorm.bias", "LayerNorm.beta")
        renamed[name] = value
    legacy = tmp_path / "legacy"
    legacy.mkdir()
    (legacy / "config.json").write_bytes((folder / "config.json").read_bytes())
    save_file(renamed, legacy / "model.safetensors")
    model = kzoo.BertMaskedLM.from_preset(str(legacy), preprocessor=None)
    assert max(max_abs_differences(kzoo_outputs(model, inputs),
                                   expected).values()) <= ATOL

    sharded = save_hf(hf_model, tmp_path / "sharded", max_shard_size="20KB")
    assert (sharded / "model.safetensors.index.json").exists()
    model = kzoo.BertMaskedLM.from_preset(str(sharded), preprocessor=None)
    assert max(max_abs_differences(kzoo_outputs(model, inputs),
                                   expected).values()) <= ATOL


def test_pytorch_bin_weights_only(checkpoints, tmp_path):
    """`pytorch_model.bin` is read with torch.load(weights_only=True)."""
    hf_model, folder, inputs, expected = checkpoints["BertModel", "odd20"]
    bin_folder = tmp_path / "bin"
    bin_folder.mkdir()
    (bin_folder / "config.json").write_bytes((folder / "config.json").read_bytes())
    torch.save(hf_model.state_dict(), bin_folder / "pytorch_model.bin")
    backbone = kzoo.BertBackbone(**_kwargs(folder))
    report = load_hf_weights(backbone, bin_folder, verbose=False)
    assert report.used and not report.unused
    assert max(max_abs_differences(kzoo_outputs(backbone, inputs),
                                   expected).values()) <= ATOL


def test_head_tensors_reported_when_loading_a_backbone(checkpoints):
    """A task checkpoint into a bare backbone: the head's tensors are
    reported as unused, nothing is silently dropped."""
    _, folder, inputs, expected = checkpoints["BertForPreTraining", "odd36"]
    backbone = kzoo.BertBackbone(**_kwargs(folder))
    report = load_hf_weights(backbone, folder, verbose=False)
    assert sorted(report.unused) == sorted([
        "cls.predictions.bias", "cls.predictions.transform.dense.weight",
        "cls.predictions.transform.dense.bias",
        "cls.predictions.transform.LayerNorm.weight",
        "cls.predictions.transform.LayerNorm.bias",
        "cls.seq_relationship.weight", "cls.seq_relationship.bias"])
    assert len(report.used) == len(backbone.weights)


def _kwargs(folder):
    from kzoo.models.bert.convert import BertConverter
    import json
    config = json.loads((folder / "config.json").read_text())
    return BertConverter().backbone_kwargs(config)
