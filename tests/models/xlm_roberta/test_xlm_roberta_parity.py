"""kzoo vs Hugging Face `transformers` XLM-RoBERTa (model_type
"xlm-roberta") on the same random checkpoints (odd shapes, non-default
epsilon, padding index and activation; left padding and a `<pad>` inside
the text): every output within 1e-5 on the backend KERAS_BACKEND names;
kzoo -> HF gives back the original tensors bit for bit and transformers
loads the export with the same outputs; the exported tokenizer is the
same tokenizer to transformers."""

import json
import shutil

import pytest

import kzoo
from kzoo.convert import export_hf
from parity_harness import (assert_round_trip_keeps_weights,
                            assert_tokenizes_as_transformers, check_conversion,
                            save_checkpoints)
from xlm_roberta_testing import (CONFIGS, HARD_TEXTS, SPM_MODEL, XLMR_PRESET,
                                 XLMR_VOCABULARY, hf_reference_tokenizer)

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"XLMRobertaModel": "XLMRobertaBackbone",
              "XLMRobertaForMaskedLM": "XLMRobertaMaskedLM",
              "XLMRobertaForSequenceClassification":
                  "XLMRobertaTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_xlm_roberta"),
                            CASES, CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path,
        tied={"lm_head.decoder.weight", "lm_head.decoder.bias"})
    # kzoo -> HF loads as the same architecture, and back again.
    assert json.loads((out / "config.json").read_text())["model_type"] \
        == "xlm-roberta"
    assert_round_trip_keeps_weights(type(model), out, exported,
                                    tmp_path / "again")

    backbone = getattr(model, "backbone", model)
    assert type(backbone) is kzoo.XLMRobertaBackbone
    assert backbone.pad_token_id == hf_config.pad_token_id
    assert backbone.max_sequence_length == \
        hf_config.max_position_embeddings - hf_config.pad_token_id - 1
    assert backbone.layer_norm_epsilon == hf_config.layer_norm_eps
    if arch == "XLMRobertaForSequenceClassification":
        assert model.num_classes == hf_config.num_labels
        assert model.dropout == (hf_config.classifier_dropout
                                 or hf_config.hidden_dropout_prob)


def test_checkpoint_with_its_tokenizer(checkpoints, tmp_path):
    """A checkpoint folder with `sentencepiece.bpe.model`: the converted
    task gets XLM-R's tokenizer and preprocessor, numbering as
    transformers' tokenizer of that folder."""
    hf_model, folder, _, _ = checkpoints["XLMRobertaForMaskedLM", "odd39"]
    reference = hf_reference_tokenizer(tmp_path / "hf")
    checkpoint = tmp_path / "with_tokenizer"
    hf_model.config.vocab_size = XLMR_VOCABULARY  # the tokenizer's
    transformers.XLMRobertaForMaskedLM(hf_model.config).save_pretrained(
        checkpoint)
    # As FacebookAI/xlm-roberta-base: transformers' tokenizer files and
    # the SentencePiece model.
    reference.save_pretrained(checkpoint)
    shutil.copyfile(SPM_MODEL, checkpoint / "sentencepiece.bpe.model")
    task = kzoo.XLMRobertaMaskedLM.from_preset(str(checkpoint))
    tokenizer = task.preprocessor.tokenizer
    assert type(tokenizer) is kzoo.XLMRobertaTokenizer
    for text in HARD_TEXTS:
        assert tokenizer([text])[0] == reference(
            text, add_special_tokens=False)["input_ids"], text


def test_exported_tokenizer_is_the_same_tokenizer(tmp_path):
    """transformers' AutoTokenizer reads kzoo's export (the SentencePiece
    model and tokenizer_config.json) and tokenizes and packs as kzoo does
    (`<mask>` stripping the space before it included)."""
    preprocessor = kzoo.XLMRobertaPreprocessor.from_preset(
        str(XLMR_PRESET), sequence_length=24)
    task = kzoo.XLMRobertaTextClassifier(
        kzoo.XLMRobertaBackbone(vocabulary_size=XLMR_VOCABULARY,
                                num_layers=1, num_heads=2, hidden_dim=8,
                                intermediate_dim=16, max_sequence_length=24),
        num_classes=2, preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    assert (out / "sentencepiece.bpe.model").read_bytes() == \
        (XLMR_PRESET / "sentencepiece.bpe.model").read_bytes()
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert type(hf_tokenizer).__name__ == "XLMRobertaTokenizer"
    assert_tokenizes_as_transformers(preprocessor, hf_tokenizer, HARD_TEXTS)
