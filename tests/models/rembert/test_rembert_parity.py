"""kzoo vs Hugging Face `transformers` RemBERT on the same random
checkpoints of the released structure (input embeddings narrower than the
blocks, an untied output embedding of its own width) and of an odd one:
every output within 1e-5; kzoo -> HF gives back the original tensors bit
for bit, transformers loads the export with the same outputs, and the
round trip keeps every tensor; a checkpoint's SentencePiece model comes
across as RemBERT's tokenizer and goes back out unchanged. (The generic token-classification and
multiple-choice heads are checked on the "odd" checkpoint by
tests/convert/test_generic_heads_parity.py, through REFERENCE.)"""

import shutil

import numpy as np
import pytest

import kzoo
from kzoo.convert import export_hf
from parity_harness import (assert_round_trip_keeps_weights, check_conversion,
                            save_checkpoints)
from rembert_testing import CONFIGS, REMBERT_SPM, REMBERT_VOCABULARY

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5
KZOO_CLASS = {"RemBertModel": "RemBertBackbone",
              "RemBertForMaskedLM": "RemBertMaskedLM",
              "RemBertForSequenceClassification": "RemBertTextClassifier"}
CASES = [(arch, config) for config in CONFIGS for arch in KZOO_CLASS]


@pytest.fixture(scope="module")
def checkpoints(tmp_path_factory):
    return save_checkpoints(tmp_path_factory.mktemp("hf_rembert"), CASES,
                            CONFIGS)


@pytest.mark.parametrize("arch,config", CASES)
def test_parity_and_round_trip(checkpoints, arch, config, tmp_path):
    model, hf_config, out, exported = check_conversion(
        checkpoints[arch, config], KZOO_CLASS[arch], tmp_path)
    assert_round_trip_keeps_weights(type(model), out, exported,
                                    tmp_path / "again")

    backbone = getattr(model, "backbone", model)
    assert (backbone.input_embedding_dim, backbone.output_embedding_dim,
            backbone.layer_norm_epsilon, backbone.activation) == (
        hf_config.input_embedding_size, hf_config.output_embedding_size,
        hf_config.layer_norm_eps, hf_config.hidden_act)
    if arch == "RemBertForSequenceClassification":
        assert model.dropout == hf_config.classifier_dropout_prob


def test_the_output_embedding_is_the_heads_own(checkpoints):
    """Untied, as RemBERT's point is: the decoder is an
    (vocabulary, output width) table of the head's, not the token
    embedding, and the parameter count is transformers'."""
    hf_model, folder, _, _ = checkpoints["RemBertForMaskedLM", "released"]
    mlm = kzoo.RemBertMaskedLM.from_preset(str(folder), preprocessor=None)
    table = mlm.mlm_head.token_embedding
    assert table is not mlm.backbone.token_embedding
    assert tuple(table.embeddings.shape) == (99, 14)
    assert tuple(mlm.backbone.token_embedding.embeddings.shape) == (99, 10)
    np.testing.assert_array_equal(
        np.asarray(table.embeddings.numpy()),
        hf_model.cls.predictions.decoder.weight.detach().numpy())
    # RemBertForMaskedLM has no pooler; kzoo's backbone always has one.
    pooler = sum(p.numel() for p in
                 transformers.RemBertModel(hf_model.config).pooler
                 .parameters())
    assert mlm.count_params() == sum(
        p.numel() for p in hf_model.parameters()) + pooler


def test_checkpoint_with_its_sentencepiece_model(tmp_path):
    """A checkpoint folder with `sentencepiece.model`, as google/rembert
    ships: the converted task gets RemBERT's tokenizer of that file,
    numbering as transformers' tokenizer of the same folder, and the
    export writes the file back byte for byte."""
    config = transformers.RemBertConfig(
        **{**CONFIGS["odd"], "vocab_size": REMBERT_VOCABULARY})
    checkpoint = tmp_path / "hub"
    transformers.RemBertForMaskedLM(config).save_pretrained(checkpoint)
    shutil.copyfile(REMBERT_SPM, checkpoint / "sentencepiece.model")
    transformers.logging.set_verbosity_error()
    reference = transformers.RemBertTokenizer.from_pretrained(checkpoint)

    task = kzoo.RemBertMaskedLM.from_preset(str(checkpoint))
    tokenizer = task.preprocessor.tokenizer
    assert type(tokenizer) is kzoo.RemBertTokenizer
    for text in ("Hello world", "Ünïcödé: café, naïve", "UPPER lower",
                 "spaces    between  words", ""):
        assert tokenizer([text])[0] == reference(
            text, add_special_tokens=False)["input_ids"], text
    out = export_hf(task, tmp_path / "exported", verbose=False)
    assert (out / "sentencepiece.model").read_bytes() == \
        (checkpoint / "sentencepiece.model").read_bytes()
