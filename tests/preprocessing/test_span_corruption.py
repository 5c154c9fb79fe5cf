"""T5 span corruption on real text (Austen, tokenized with T5's
tokenizer): density, mean span length, sentinel order, reconstruction,
and the original's fixed lengths."""

import numpy as np
import pytest

import kzoo
from helpers import austen_text
from kzoo.preprocessing.span_corruption import (corrupt_spans,
                                                random_spans_noise_mask,
                                                span_corruption_lengths)
from t5_testing import T5_PRESET

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.T5Tokenizer.from_preset(str(T5_PRESET))


@pytest.fixture(scope="module")
def examples(tokenizer):
    """Consecutive 568-token chunks of Pride and Prejudice: what an input
    of 512 holds, as the original cuts its text."""
    ids = tokenizer([austen_text("pride_and_prejudice")])[0]
    tokens_length, _ = span_corruption_lengths(512)
    return [np.asarray(ids[i:i + tokens_length])
            for i in range(0, len(ids) - tokens_length + 1, tokens_length)]


def test_lengths_are_the_originals():
    # t5.data.preprocessors.random_spans_helper's values for T5's 512.
    assert span_corruption_lengths(512) == (568, 114)
    # The input of that many tokens is exactly inputs_length long:
    # round(142 * .15) = 21 noise tokens, round(21 / 3) = 7 spans,
    # 121 kept + 7 sentinels + </s> = 129 > 128, so 141 tokens.
    assert span_corruption_lengths(128) == (141, 29)


def _spans(mask):
    """Lengths of the runs of True."""
    edges = np.diff(np.concatenate([[0], mask.astype(int), [0]]))
    return np.flatnonzero(edges == -1) - np.flatnonzero(edges == 1)


def test_density_and_span_length(examples):
    rng = np.random.default_rng(0)
    masks = [random_spans_noise_mask(len(e), rng) for e in examples
             for _ in range(20)]
    density = np.mean([m.mean() for m in masks])
    spans = np.concatenate([_spans(m) for m in masks])
    # round(568 * 0.15) = 85 noise tokens in round(85 / 3) = 28 spans.
    assert all(m.sum() == 85 for m in masks)
    assert all(len(_spans(m)) == 28 for m in masks)
    assert abs(density - 0.15) < 0.001
    assert abs(spans.mean() - 85 / 28) < 1e-9
    # Spans differ (random), all non-empty, noise never first.
    assert len({tuple(m) for m in masks}) == len(masks)
    assert spans.min() >= 1 and not any(m[0] for m in masks)


def test_sentinel_order_and_reconstruction(tokenizer, examples):
    rng = np.random.default_rng(1)
    sentinels = [tokenizer.sentinel_id(i) for i in range(100)]
    end = tokenizer.end_token_id
    for tokens in examples:
        mask = random_spans_noise_mask(len(tokens), rng)
        inputs, targets = corrupt_spans(tokens, mask, sentinels, end)
        assert (len(inputs), len(targets)) == (512, 114)  # fixed shapes
        used = [t for t in inputs if t in set(sentinels)]
        assert used == sentinels[:28]  # <extra_id_0>, <extra_id_1>, ...
        assert [t for t in targets if t in set(sentinels)] == used
        # Fill each sentinel of the input with what follows it in the
        # target: the original text comes back.
        pieces, current = {}, None
        for t in targets[:-1]:
            if t in set(sentinels):
                current = t
                pieces[current] = []
            else:
                pieces[current].append(t)
        rebuilt = []
        for t in inputs[:-1]:
            rebuilt.extend(pieces[t] if t in pieces else [t])
        np.testing.assert_array_equal(rebuilt, tokens)
        assert tokenizer.detokenize(rebuilt) == tokenizer.detokenize(tokens)


def _originals_counts(length, noise_density=0.15, mean_noise_span_length=3.0):
    """(noise tokens, noise spans) for `length` tokens, computed as t5's
    `random_spans_noise_mask` writes it (t5/data/preprocessors.py): the
    length cast to float32, times the density, tf.round (half to even) in
    float32; the spans likewise from the float32 noise count."""
    import tensorflow as tf
    length = tf.maximum(tf.constant(length, tf.int32), 2)
    num_noise_tokens = tf.cast(
        tf.round(tf.cast(length, tf.float32) * noise_density), tf.int32)
    num_noise_tokens = tf.minimum(tf.maximum(num_noise_tokens, 1),
                                  length - 1)
    num_noise_spans = tf.cast(tf.round(
        tf.cast(num_noise_tokens, tf.float32) / mean_noise_span_length),
        tf.int32)
    num_noise_spans = tf.maximum(num_noise_spans, 1)
    return int(num_noise_tokens), int(num_noise_spans)


@pytest.mark.parametrize("noise_density,mean_noise_span_length",
                         [(0.15, 3.0), (0.5, 2.5)])
def test_counts_round_as_the_original_in_float32(
        tokenizer, noise_density, mean_noise_span_length):
    # The original rounds length * density in float32, half to even, so
    # 190 * 0.15 (28.500001 in float32) gives 29 noise tokens where
    # Python's float64 round(28.499999999999996) gives 28; likewise 350,
    # 390, 670, 710, 750, 790 and 830 below 1024. Every length, both
    # implementations, against the original's arithmetic.
    import tensorflow as tf
    rng = np.random.default_rng(0)
    corrupter = _corrupter(tokenizer, seed=0, noise_density=noise_density,
                           mean_noise_span_length=mean_noise_span_length)
    noise_mask = tf.function(corrupter.noise_mask, reduce_retracing=True)
    differ = []
    for length in range(1, 1025):
        expected = _originals_counts(length, noise_density,
                                     mean_noise_span_length)
        numpy_mask = random_spans_noise_mask(
            length, rng, noise_density, mean_noise_span_length)
        tf_mask = noise_mask(tf.constant(length)).numpy()
        for mask in (numpy_mask, tf_mask):
            assert mask.shape == (length,)
            # One token: the original draws the mask of 2 and cuts it.
            got = (int(mask.sum()), len(_spans(mask))) if length >= 2 \
                else expected
            if got != expected:
                differ.append((length, got, expected))
    assert not differ, differ[:10]
    if (noise_density, mean_noise_span_length) == (0.15, 3.0):
        # The lengths where float32 and float64 disagree: the noise count
        # is float32's.
        assert [_originals_counts(n)[0] for n in (190, 350, 670)] == \
            [29, 53, 101]


# ----------------------------------------------------------------------
# SpanCorrupter: the same rule in TensorFlow ops, for tf.data
# ----------------------------------------------------------------------
def _corrupter(tokenizer, **kwargs):
    from kzoo.preprocessing import SpanCorrupter
    return SpanCorrupter([tokenizer.sentinel_id(i) for i in range(100)],
                         **kwargs)


def test_tf_masks_have_the_originals_counts(tokenizer):
    # The counts are fixed by the length (the draws only place them):
    # the same as the numpy version's for every length, 1 and 2 included.
    import tensorflow as tf
    corrupter = _corrupter(tokenizer, seed=0)
    rng = np.random.default_rng(0)
    for length in (1, 2, 3, 7, 20, 141, 568):
        ours = corrupter.noise_mask(tf.constant(length)).numpy()
        theirs = random_spans_noise_mask(length, rng)
        assert ours.shape == (length,)
        assert ours.sum() == theirs.sum()
        assert len(_spans(ours)) == len(_spans(theirs))
        assert length < 2 or not ours[0]


def test_tf_corruption_equals_numpy_on_its_mask(tokenizer, examples):
    import tensorflow as tf
    corrupter = _corrupter(tokenizer, seed=1,
                           end_token_id=tokenizer.end_token_id)
    sentinels = [tokenizer.sentinel_id(i) for i in range(100)]
    masks = set()
    for tokens in examples[:4]:
        mask = corrupter.noise_mask(tf.size(tokens))
        masks.add(tuple(mask.numpy()))
        ids = tf.constant(tokens, tf.int32)
        inputs = corrupter._replace(ids, mask).numpy()
        targets = corrupter._replace(ids, ~mask).numpy()
        expected = corrupt_spans(tokens, mask.numpy(), sentinels,
                                 tokenizer.end_token_id)
        np.testing.assert_array_equal(inputs, expected[0])
        np.testing.assert_array_equal(targets, expected[1])
        assert (len(inputs), len(targets)) == (512, 114)
    assert len(masks) == 4  # fresh draws


def test_tf_corrupter_in_tf_data_draws_afresh_each_pass(tokenizer):
    import tensorflow as tf
    corrupter = _corrupter(tokenizer, seed=2)
    ids = np.arange(3, 3 + 4 * 40).reshape(4, 40).astype("int32")
    dataset = tf.data.Dataset.from_tensor_slices(ids).batch(2).map(
        lambda batch: corrupter(tf.RaggedTensor.from_tensor(batch)))
    passes = [[tuple(x.numpy()) for inputs, _ in dataset for x in inputs]
              for _ in range(2)]
    assert len(passes[0]) == 4 and passes[0] != passes[1]
    # One example (rank 1) works too, and a dense batch.
    inputs, targets = corrupter(ids[0])
    assert inputs.shape.rank == 1 and targets.shape.rank == 1
    inputs, _ = corrupter(ids)
    assert isinstance(inputs, tf.RaggedTensor) and inputs.nrows() == 4


def test_tf_corrupter_refuses_bad_settings(tokenizer):
    import tensorflow as tf
    from kzoo.preprocessing import SpanCorrupter
    with pytest.raises(ValueError, match="noise_density must be in"):
        _corrupter(tokenizer, noise_density=1.5)
    with pytest.raises(ValueError, match="mean_noise_span_length must be"):
        _corrupter(tokenizer, mean_noise_span_length=0)
    with pytest.raises(ValueError, match="at least one sentinel"):
        SpanCorrupter([])
    # More spans than sentinels: said, not an index error.
    few = SpanCorrupter([7, 8], mean_noise_span_length=1.0, seed=0)
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match="more spans than the 2 sentinels"):
        few(np.arange(3, 103, dtype="int32"))
