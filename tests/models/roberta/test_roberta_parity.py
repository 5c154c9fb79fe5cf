"""kzoo vs Hugging Face `transformers` RoBERTa on the same random
checkpoints (odd shapes, non-default epsilon, padding index and
activation; left padding and a `<pad>` inside the text, which RoBERTa's
position numbering skips): every output within 1e-5 on the backend
KERAS_BACKEND names; kzoo -> HF gives back the original tensors bit for
bit and transformers loads the export with the same outputs; the exported
tokenizer is the same tokenizer to transformers."""

import pytest

import kzoo
from kzoo.convert import export_hf
from parity_harness import (assert_tokenizes_as_transformers, check_conversion,
                            save_checkpoints)
from roberta_testing import CONFIGS, HARD_TEXTS, ROBERTA_PRESET

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"RobertaModel": "RobertaBackbone",
              "RobertaForMaskedLM": "RobertaMaskedLM",
              "RobertaForSequenceClassification": "RobertaTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_roberta"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"lm_head.decoder.weight", "lm_head.decoder.bias"})

    backbone = getattr(model, "backbone", model)
    assert backbone.pad_token_id == hf_config.pad_token_id
    assert backbone.max_sequence_length == \
        hf_config.max_position_embeddings - hf_config.pad_token_id - 1
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    assert backbone.activation == hf_config.hidden_act
    if arch == "RobertaForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.dropout == (hf_config.classifier_dropout
                                 or hf_config.hidden_dropout_prob)


def test_exported_tokenizer_is_the_same_tokenizer(checkpoints, tmp_path):
    """A classifier with the RoBERTa-format tokenizer: transformers'
    AutoTokenizer reads the export and tokenizes and packs as kzoo does
    (`<mask>` stripping the space before it included)."""
    preprocessor = kzoo.RobertaPreprocessor.from_preset(ROBERTA_PRESET,
                                                        sequence_length=24)
    task = kzoo.RobertaTextClassifier(
        kzoo.RobertaBackbone(vocabulary_size=50262, num_layers=1,
                             num_heads=2, hidden_dim=8, intermediate_dim=16,
                             max_sequence_length=24),
        num_classes=2, preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, HARD_TEXTS)


def test_checkpoint_with_two_token_types_is_refused(tmp_path):
    from kzoo.convert import ConversionError
    config = transformers.RobertaConfig(**{**CONFIGS["odd36"],
                                           "type_vocab_size": 2})
    transformers.RobertaModel(config).save_pretrained(tmp_path / "two")
    with pytest.raises(ConversionError, match="type_vocab_size=2.*one token "
                                              "type"):
        kzoo.RobertaBackbone.from_preset(str(tmp_path / "two"))
