"""kzoo vs Hugging Face `transformers` MobileBERT on random checkpoints of
the released structure (NoNorm, the trigram input, shared query/key
bottlenecks, several feed-forward networks per block, the MLM head's
widened output embedding) at small sizes: every output within 1e-5 on
the backend KERAS_BACKEND names; kzoo -> HF gives back the original
tensors bit for bit and transformers loads the export with the same
outputs; HF -> kzoo -> HF -> kzoo keeps every weight."""

import json
import shutil

import pytest

import kzoo
from kzoo.convert import HFCheckpoint, hf_to_preset
from kzoo.convert.base import converter_for_model_type
from kzoo.convert.errors import ConversionError
from helpers import assert_weights_identical
from mobilebert_testing import CONFIGS
from parity_harness import (assert_close_to_reference, check_conversion,
                            from_checkpoint, hf_outputs, make_hf_model,
                            random_inputs, save_checkpoints)

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"MobileBertModel": "MobileBertBackbone",
              "MobileBertForMaskedLM": "MobileBertMaskedLM",
              "MobileBertForSequenceClassification":
                  "MobileBertTextClassifier",
              "MobileBertForTokenClassification": "TokenClassifier",
              "MobileBertForQuestionAnswering": "QuestionAnswerer"}
# The pooled config through the classifier, which reads the pooler.
CASES = [(arch, "released") for arch in KZOO_CLASS] + [
    ("MobileBertForSequenceClassification", "pooled")]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_mobilebert"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"cls.predictions.decoder.weight",
              "cls.predictions.decoder.bias"}, reload_atol=1e-6)
    # ... and back: kzoo -> HF -> kzoo keeps every weight bit for bit.
    back = from_checkpoint(type(model), out)
    assert_weights_identical(getattr(back, "backbone", back),
                             getattr(model, "backbone", model))
    assert_weights_identical(back, model)

    backbone = getattr(model, "backbone", model)
    assert (backbone.embedding_dim, backbone.hidden_dim,
            backbone.bottleneck_dim, backbone.num_feedforward_networks,
            backbone.pooler_dense, backbone.activation) == (
        hf_config.embedding_size, hf_config.hidden_size,
        hf_config.true_hidden_size, hf_config.num_feedforward_networks,
        hf_config.classifier_activation, hf_config.hidden_act)
    if arch == "MobileBertForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.dropout == (hf_config.classifier_dropout
                                 or hf_config.hidden_dropout_prob)


def test_the_released_pretraining_checkpoint_converts_to_the_masked_lm(
        tmp_path):
    """google/mobilebert-uncased is a `MobileBertForPreTraining`: it
    converts to `MobileBertMaskedLM` (the MLM logits equal), the
    next-sentence head reported unused; so does the same checkpoint with
    no architecture named (found by its heads)."""
    hf_model = make_hf_model("MobileBertForPreTraining",
                             CONFIGS["released"])
    folder = tmp_path / "hub"
    hf_model.save_pretrained(folder)
    inputs = random_inputs(hf_model.config)
    expected = {"logits": hf_outputs(hf_model, inputs)["mlm"]}
    report = hf_to_preset(folder, tmp_path / "kzoo", task="pretraining",
                          verbose=False)
    assert report.model_class == "MobileBertMaskedLM"
    assert sorted(report.unused) == ["cls.seq_relationship.bias",
                                     "cls.seq_relationship.weight"]
    model = kzoo.MobileBertMaskedLM.from_preset(str(tmp_path / "kzoo"),
                                                preprocessor=None)
    assert_close_to_reference(model, inputs, expected, ATOL,
                              "MobileBertForPreTraining")

    config = json.loads((folder / "config.json").read_text())
    config.pop("architectures")
    (folder / "config.json").write_text(json.dumps(config))
    assert converter_for_model_type("mobilebert").detect_task(
        HFCheckpoint(folder)) == "MobileBertMaskedLM"


@pytest.mark.parametrize("field,value", [
    ("trigram_input", False), ("use_bottleneck", False),
    ("use_bottleneck_attention", True),
    ("key_query_shared_bottleneck", False),
    ("normalization_type", "layer_norm")])
def test_options_kzoo_does_not_compute_are_refused(checkpoints, field, value,
                                                   tmp_path):
    _, folder, _, _ = checkpoints["MobileBertModel", "released"]
    changed = tmp_path / "changed"
    shutil.copytree(folder, changed)
    config = json.loads((changed / "config.json").read_text())
    config[field] = value
    (changed / "config.json").write_text(json.dumps(config))
    with pytest.raises(ConversionError, match=f"{field}={value!r}"):
        kzoo.MobileBertBackbone.from_preset(str(changed))

