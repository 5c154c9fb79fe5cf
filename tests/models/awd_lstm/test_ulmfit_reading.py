"""ULMFiT reads text as fastai does: the language model's windows hold
`bptt` tokens (fastai's rules applied, `xxbos` before each text), every one
of them a target; the classifier reads a document of many 72-token chunks
(fastai's `SentenceEncoder`, `max_len` 1,440) and concat-pools over all of
it (fastai's `masked_concat_pool`), as a plain PyTorch LSTM stack run over
the whole document."""

import keras
import numpy as np
import pytest
import torch

import kzoo
from awd_lstm_testing import TINY, VOCABULARY
from helpers import austen_paragraphs, to_numpy
from kzoo.recipes import ulmfit

SMALL = {**TINY, "vocabulary_size": 1000}


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.AwdLstmTokenizer(vocabulary=VOCABULARY)


def tiny_language_model(tokenizer, sequence_length):
    return kzoo.AwdLstmLanguageModel(
        kzoo.AwdLstmBackbone(**SMALL),
        preprocessor=kzoo.AwdLstmLanguageModelPreprocessor(
            tokenizer, sequence_length=sequence_length))


@pytest.mark.once
def test_language_model_windows_count_tokens(tokenizer):
    texts = austen_paragraphs("pride_and_prejudice", min_words=6)[:12]
    bptt = 70
    windows = ulmfit.corpus_windows(texts, tokenizer, bptt=bptt)
    # The reference stream: each text's ids (rules applied), xxbos first.
    stream = []
    for ids in tokenizer(texts):
        stream += [tokenizer.bos_token_id] + list(ids)
    assert len(windows) == len(stream) // bptt > 1
    preprocessor = kzoo.AwdLstmLanguageModelPreprocessor(
        tokenizer, sequence_length=bptt)
    _, targets, weights = to_numpy(preprocessor(windows))
    # Every window's bptt tokens are all targets (none cut, none padded),
    # and together they are the stream, in order.
    assert weights.sum(axis=1).tolist() == [bptt] * len(windows)
    assert targets.reshape(-1).tolist() == stream[:len(windows) * bptt]


@pytest.mark.once
def test_windows_longer_than_the_model_reads_are_refused(tokenizer):
    lm = tiny_language_model(tokenizer, sequence_length=32)
    with pytest.raises(ValueError, match="bptt=70 tokens.*reads 32"):
        ulmfit.pretrain_language_model(lm, ["Some text."])


def torch_lstm_stack(backbone):
    """The backbone's LSTMs as `torch.nn.LSTM`s (Keras and torch share
    the gate order i, f, g, o; torch's second bias is left at zero)."""
    lstms = []
    for layer in backbone.lstm_layers:
        kernel, recurrent, bias = (to_numpy(w) for w in layer.weights)
        lstm = torch.nn.LSTM(kernel.shape[0], recurrent.shape[0],
                             batch_first=True)
        with torch.no_grad():
            lstm.weight_ih_l0.copy_(torch.from_numpy(kernel.T.copy()))
            lstm.weight_hh_l0.copy_(torch.from_numpy(recurrent.T.copy()))
            lstm.bias_ih_l0.copy_(torch.from_numpy(bias))
            lstm.bias_hh_l0.zero_()
        lstms.append(lstm)
    return lstms


def test_classifier_pools_over_a_whole_long_document(tokenizer):
    lm = tiny_language_model(tokenizer, sequence_length=24)
    classifier = ulmfit.classifier_from_language_model(lm, num_classes=2)
    words = " ".join(austen_paragraphs("sense_and_sensibility")).split()
    document = " ".join(words[:250])
    x = to_numpy(classifier.preprocessor([document]))
    length = int(x["padding_mask"].sum())
    ids = x["token_ids"][0, :length]
    # Many of fastai's 72-token chunks, all of them read (xxbos + text).
    assert 4 * 72 < length == len(tokenizer([document])[0]) + 1 <= 1440
    pooling = classifier.get_layer("concat_pooling")
    pooled = to_numpy(keras.Model(classifier.inputs, pooling.output)(
        x, training=False))[0]

    # Reference: the embedding, then each LSTM over the whole sequence at
    # once from zero state; fastai's masked_concat_pool over it.
    embedding = to_numpy(classifier.backbone.token_embedding.embeddings)
    with torch.no_grad():
        h = torch.from_numpy(embedding[ids][None])
        for lstm in torch_lstm_stack(classifier.backbone):
            h, _ = lstm(h)
    top = h[0].numpy()
    expected = np.concatenate([top[-1], top.max(0), top.mean(0)])
    np.testing.assert_allclose(pooled, expected, atol=2e-6)
