"""kzoo vs Hugging Face `transformers` DeBERTa-v2/v3 on the same random
checkpoints (odd widths and head counts; 8 log buckets reaching 16, and
no buckets at all; shared and separate position projections; both MLM
head layouts), on inputs shorter and longer than the bucket range with
left and right padding: every output within 1e-5 on the backend
KERAS_BACKEND names; kzoo -> HF gives back the original tensors bit for
bit and transformers loads the export with the same outputs; the
exported tokenizer is the same tokenizer to transformers; options kzoo
does not implement are refused by name."""

import numpy as np
import pytest

import kzoo
from kzoo.convert import ConversionError, export_hf
from kzoo.core.registry import get_class
from helpers import assert_weights_identical
from parity_harness import (assert_close_to_reference,
                            assert_tokenizes_as_transformers,
                            check_exported_weights, from_checkpoint,
                            hf_outputs, make_hf_model, random_inputs)
from deberta_v3_testing import CONFIGS, DEBERTA_PRESET, HARD_TEXTS

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"DebertaV2Model": "DebertaV3Backbone",
              "DebertaV2ForMaskedLM": "DebertaV3MaskedLM",
              "DebertaV2ForSequenceClassification": "DebertaV3TextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]
LENGTHS = (5, 40)  # within and past the bucket range


def legacy_name(name):
    """The original head's tensor names as transformers' legacy head
    (the layout kzoo exports)."""
    return (name.replace("lm_predictions.lm_head.dense",
                         "cls.predictions.transform.dense")
            .replace("lm_predictions.lm_head.LayerNorm",
                     "cls.predictions.transform.LayerNorm")
            .replace("lm_predictions.lm_head.bias", "cls.predictions.bias"))


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    root = tmp_path_factory.mktemp("hf_deberta")
    made = {}
    for arch, config in CASES:
        model = make_hf_model(arch, CONFIGS[config])
        folder = root / f"{arch}-{config}"
        model.save_pretrained(folder)
        inputs = [random_inputs(model.config, seq=seq) for seq in LENGTHS]
        made[arch, config] = (model, folder, inputs,
                              [hf_outputs(model, x) for x in inputs])
    return made


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    hf_model, folder, inputs, expected = checkpoints[arch, config]
    model = from_checkpoint(get_class(KZOO_CLASS[arch]), folder)

    backbone = getattr(model, "backbone", model)
    hf_config = hf_model.config
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    assert backbone.activation == hf_config.hidden_act
    assert backbone.share_att_key == hf_config.share_att_key
    assert backbone.position_buckets == max(hf_config.position_buckets, 0)
    if arch == "DebertaV2ForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.pooler_dropout == hf_config.pooler_dropout
        assert model.dropout == getattr(hf_config, "cls_dropout",
                                        hf_config.hidden_dropout_prob)

    for x, reference, seq in zip(inputs, expected, LENGTHS):
        assert_close_to_reference(model, x, reference, ATOL,
                                  f"{arch}/{config}/seq{seq}")

    # kzoo -> HF: the same tensors, bit for bit, and transformers loads it.
    out = export_hf(model, tmp_path / "exported", verbose=False)
    original = {legacy_name(k): v.numpy()
                for k, v in hf_model.state_dict().items()}
    tied = {"cls.predictions.decoder.weight", "cls.predictions.decoder.bias"}
    check_exported_weights(out, original, tied)
    reloaded = getattr(transformers, arch).from_pretrained(out).eval()
    for x, reference in zip(inputs, expected):
        again = hf_outputs(reloaded, x)
        for name, value in reference.items():
            np.testing.assert_allclose(again[name], value, atol=1e-6,
                                       err_msg=name)
    # ... and back: kzoo reads its own export to the same weights.
    assert_weights_identical(from_checkpoint(type(model), out), model)


def test_exported_tokenizer_is_the_same_tokenizer(tmp_path):
    preprocessor = kzoo.DebertaV3Preprocessor.from_preset(DEBERTA_PRESET,
                                                          sequence_length=24)
    task = kzoo.DebertaV3TextClassifier(
        kzoo.DebertaV3Backbone(vocabulary_size=1005, num_layers=1,
                               num_heads=2, hidden_dim=8, intermediate_dim=16,
                               position_buckets=4, max_relative_positions=8),
        num_classes=2, preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, HARD_TEXTS)


@pytest.mark.parametrize("change,match", [
    ({"relative_attention": False}, "relative_attention=false"),
    ({"position_biased_input": True}, "position_biased_input=true"),
    ({"conv_kernel_size": 3}, "conv_kernel_size=3"),
    ({"type_vocab_size": 2}, "type_vocab_size=2"),
    ({"norm_rel_ebd": "none"}, "norm_rel_ebd='none'"),
    ({"pos_att_type": "c2p"}, "pos_att_type="),
    ({"embedding_size": 16}, "embedding_size=16"),
])
def test_unimplemented_options_are_refused(tmp_path, change, match):
    config = transformers.DebertaV2Config(**{**CONFIGS["odd35"], **change})
    transformers.DebertaV2Model(config).save_pretrained(tmp_path / "ck")
    with pytest.raises(ConversionError, match=match + ".*does not implement"):
        kzoo.DebertaV3Backbone.from_preset(str(tmp_path / "ck"))
