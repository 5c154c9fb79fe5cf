"""kzoo vs Hugging Face `transformers` ELECTRA on the same random
checkpoints (odd shapes: an embedding size that differs from the hidden
size, and one equal to it; odd head counts; non-default epsilon,
activation, token types and classifier dropout): every output within
1e-5 on the backend KERAS_BACKEND names; kzoo -> HF gives back the
original tensors bit for bit and transformers loads the export with the
same outputs; HF -> kzoo -> HF -> kzoo keeps every kzoo weight bit for
bit; the exported tokenizer is the same tokenizer to transformers."""

import pytest

import kzoo
from kzoo.convert import HFCheckpoint, export_hf
from kzoo.convert.base import converter_for_model_type
from helpers import assert_weights_identical
from parity_harness import (assert_tokenizes_as_transformers, check_conversion,
                            from_checkpoint, save_checkpoints)
from electra_testing import CONFIGS

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
ELECTRA_PRESET = "electra_small_discriminator_en_uncased"
KZOO_CLASS = {"ElectraModel": "ElectraBackbone",
              "ElectraForPreTraining": "ElectraDiscriminator",
              "ElectraForMaskedLM": "ElectraMaskedLM",
              "ElectraForSequenceClassification": "ElectraTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_electra"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        # The tensors are identical; torch's kernels may round a freshly
        # loaded copy's outputs differently in the last bit.
        tied={"generator_lm_head.weight"}, reload_atol=1e-6)
    # ... and back: kzoo -> HF -> kzoo keeps every weight bit for bit.
    back = from_checkpoint(type(model), out)
    assert_weights_identical(getattr(back, "backbone", back),
                             getattr(model, "backbone", model))
    assert_weights_identical(back, model)

    backbone = getattr(model, "backbone", model)
    assert backbone.embedding_width == hf_config.embedding_size
    assert backbone.hidden_dim == hf_config.hidden_size
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    assert backbone.activation == hf_config.hidden_act
    projected = hf_config.embedding_size != hf_config.hidden_size
    assert ("embeddings_project" in [l.name for l in backbone.layers]) \
        == projected
    if arch == "ElectraForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.dropout == (hf_config.classifier_dropout
                                 or hf_config.hidden_dropout_prob)


def test_pretraining_heads_are_detected_without_architectures(checkpoints,
                                                              tmp_path):
    """A checkpoint whose config names no architecture converts to the
    task its heads show (the discriminator's, or the generator's)."""
    import json
    import shutil
    for arch, task in (("ElectraForPreTraining", "ElectraDiscriminator"),
                       ("ElectraForMaskedLM", "ElectraMaskedLM")):
        folder = tmp_path / arch
        shutil.copytree(checkpoints[arch, "odd36"][1], folder)
        config = json.loads((folder / "config.json").read_text())
        config.pop("architectures")
        (folder / "config.json").write_text(json.dumps(config))
        checkpoint = HFCheckpoint(folder)
        assert not checkpoint.architectures
        assert converter_for_model_type("electra").detect_task(
            checkpoint) == task


def test_exported_tokenizer_is_the_same_tokenizer(tmp_path):
    """A classifier with ELECTRA's tokenizer: transformers' AutoTokenizer
    reads the export (an ElectraTokenizer) and tokenizes and packs as kzoo
    does."""
    preprocessor = kzoo.ElectraPreprocessor.from_preset(ELECTRA_PRESET,
                                                        sequence_length=24)
    task = kzoo.ElectraTextClassifier(
        kzoo.ElectraBackbone(vocabulary_size=30522, num_layers=1,
                             num_heads=2, hidden_dim=8, intermediate_dim=16,
                             embedding_size=6, max_sequence_length=24),
        num_classes=2, preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    import json
    written = json.loads((out / "tokenizer_config.json").read_text())
    assert written["tokenizer_class"] == "ElectraTokenizer"
    texts = ["Hello World!", "Ünïcödé café, naïve", "日本語 and emoji 🙂",
             "don't [MASK] stop"]
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, texts)
