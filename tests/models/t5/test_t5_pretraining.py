"""T5 pretraining on real text: span corruption (`SpanCorrupter`) inside a
`tf.data` pipeline from raw Austen text, packed by
`T5Preprocessor.pack_ids`; the batches undo to the original text, and a
tiny T5 learns from them."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import austen_paragraphs
from kzoo.preprocessing.span_corruption import (SpanCorrupter,
                                                span_corruption_lengths)
from t5_testing import T5_PRESET, make_tiny_t5

INPUTS_LENGTH = 32
TOKENS_LENGTH, TARGETS_LENGTH = span_corruption_lengths(INPUTS_LENGTH)


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.T5Tokenizer.from_preset(str(T5_PRESET))


def span_corruption_batches(tokenizer, batch_size, seed):
    """Raw paragraphs -> one token stream cut into TOKENS_LENGTH chunks
    (as the original cuts its text) -> span-corrupted, packed batches,
    all in tf.data."""
    preprocessor = kzoo.T5Preprocessor(
        tokenizer, sequence_length=INPUTS_LENGTH,
        target_length=TARGETS_LENGTH)
    corrupter = SpanCorrupter(
        [tokenizer.sentinel_id(i) for i in range(100)], seed=seed)
    paragraphs = austen_paragraphs("pride_and_prejudice")
    return (tf.data.Dataset.from_tensor_slices(paragraphs)
            .map(tokenizer.tokenize_tf).unbatch()
            .batch(TOKENS_LENGTH, drop_remainder=True)
            .batch(batch_size, drop_remainder=True)
            .map(lambda ids: preprocessor.pack_ids(
                *corrupter(tf.RaggedTensor.from_tensor(ids)))))


def _undo(inputs, targets, sentinels):
    """The chunk back from its input (kept spans, a sentinel per noise
    span) and target (a sentinel per kept span, the noise spans)."""
    def spans(ids):  # sentinel -> the tokens after it
        out, current = {}, None
        for token in ids:
            if token in sentinels:
                current = out.setdefault(token, [])
            elif current is not None:
                current.append(token)
        return out
    noise = spans(targets)
    text = []
    for token in inputs:
        text.extend(noise[token] if token in sentinels else [token])
    return text


@pytest.mark.once
def test_batches_undo_to_the_text(tokenizer):
    x, labels, weights = next(iter(span_corruption_batches(tokenizer, 8, 0)))
    encoder = x["encoder_token_ids"].numpy()
    labels, weights = labels.numpy(), weights.numpy()
    sentinels = {tokenizer.sentinel_id(i) for i in range(100)}
    # The token stream the pipeline cuts: paragraph after paragraph.
    stream = [token for ids in tokenizer(
        austen_paragraphs("pride_and_prejudice")[:60]) for token in ids]
    assert len(stream) > 8 * TOKENS_LENGTH
    # 34 tokens: 5 noise tokens in 2 spans -> 29 + 2 + </s>, 5 + 2 + </s>.
    assert (TOKENS_LENGTH, TARGETS_LENGTH) == (34, 8)
    end = tokenizer.end_token_id
    for row in range(8):
        # The input fills its length exactly and ends with </s>; the
        # target starts with <extra_id_0> (noise never starts a chunk).
        assert x["encoder_padding_mask"].numpy()[row].all()
        assert encoder[row, -1] == end
        assert labels[row, 0] == tokenizer.sentinel_id(0)
        target = labels[row][weights[row] == 1]
        assert target[-1] == end
        chunk = _undo(encoder[row, :-1].tolist(), target[:-1].tolist(),
                      sentinels)
        assert chunk == stream[row * TOKENS_LENGTH:(row + 1) * TOKENS_LENGTH]
    np.testing.assert_array_equal(x["decoder_token_ids"].numpy()[:, 0], 0)
    np.testing.assert_array_equal(x["decoder_token_ids"].numpy()[:, 1:],
                                  labels[:, :-1])


@pytest.mark.convergence
def test_span_corruption_pretraining_lowers_the_loss(tokenizer):
    import keras
    keras.utils.set_random_seed(0)
    lm = kzoo.T5Seq2SeqLM(make_tiny_t5(dropout=0.0, num_layers=1,
                                       num_decoder_layers=1))
    lm.compile(optimizer=keras.optimizers.Adam(3e-2))
    # 20 steps of 32 chunks, reported as 5 "epochs" of 4 (the first one's
    # mean is the starting value: a conservative one). Fresh spans on
    # every pass over the text: the corrupter's generator carries over.
    batches = span_corruption_batches(tokenizer, 32, seed=1)
    history = lm.fit(batches.repeat(), steps_per_epoch=4, epochs=5,
                     verbose=0).history
    losses, accuracy = history["loss"], history["accuracy"]
    assert np.all(np.isfinite(losses)), losses
    # From ~ln(1100) = 7.0: sentinels and frequent words first (torch:
    # 6.9 -> 4.8, accuracy 0.06 -> 0.23).
    assert losses[-1] < 0.8 * losses[0], losses
    assert accuracy[-1] > accuracy[0] + 0.05, accuracy
