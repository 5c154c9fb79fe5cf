"""Sampled softmax: the same losses as `tf.nn.sampled_softmax_loss` on the
same draws, log-uniform draws, and ELMo's language model trained with it
(fresh negatives every step; evaluation on the full softmax)."""

import numpy as np
import tensorflow as tf

from helpers import to_numpy
from kzoo.layers.sampled_softmax import (LogUniformSampler,
                                         log_uniform_log_probability,
                                         sampled_softmax_losses)

VOCABULARY = 50


def test_losses_equal_tensorflow_on_the_same_draws():
    rng = np.random.default_rng(0)
    hidden = rng.normal(size=(3, 4, 8)).astype("float32")
    targets = rng.integers(0, VOCABULARY, size=(3, 4)).astype("int32")
    kernel = rng.normal(size=(8, VOCABULARY)).astype("float32")
    bias = rng.normal(size=(VOCABULARY,)).astype("float32")
    sampler = LogUniformSampler(VOCABULARY, 12, seed=0)
    # Distinct draws; accidental hits included (the first targets).
    candidates = np.unique(np.concatenate(
        [to_numpy(sampler(hidden))[:9], targets[0, :2]])).astype("int32")
    ours = to_numpy(sampled_softmax_losses(
        hidden, targets, kernel, bias, candidates,
        sampler.log_expected_count))

    def expected_count(ids):
        return np.exp(to_numpy(sampler.log_expected_count(ids)))

    theirs = tf.nn.sampled_softmax_loss(
        weights=kernel.T, biases=bias,
        labels=targets.reshape(-1, 1).astype("int64"),
        inputs=hidden.reshape(-1, 8), num_sampled=len(candidates),
        num_classes=VOCABULARY,
        sampled_values=(candidates.astype("int64"),
                        expected_count(targets.reshape(-1, 1)),
                        expected_count(candidates)),
        remove_accidental_hits=True)
    np.testing.assert_allclose(ours, theirs.numpy().reshape(3, 4),
                               rtol=1e-5, atol=1e-5)


def test_draws_are_distinct_and_follow_the_log_uniform_distribution():
    p = np.exp(to_numpy(log_uniform_log_probability(np.arange(VOCABULARY),
                                                    VOCABULARY)))
    np.testing.assert_allclose(p.sum(), 1.0, rtol=1e-5)
    sampler = LogUniformSampler(VOCABULARY, 10, seed=0)
    anchor = np.zeros((1, 1), "float32")
    draws = np.stack([to_numpy(sampler(anchor)) for _ in range(400)])
    assert all(len(set(row)) == 10 for row in draws)
    assert draws.min() >= 0 and draws.max() < VOCABULARY
    assert not np.array_equal(draws[0], draws[1])  # fresh per call
    # How often each id is in a sample: its expected count, within 5
    # standard deviations over 400 samples.
    inclusion = np.exp(to_numpy(sampler.log_expected_count(
        np.arange(VOCABULARY))))
    np.testing.assert_allclose(inclusion.sum(), 10, rtol=1e-3)
    seen = np.bincount(draws.ravel(), minlength=VOCABULARY) / 400
    spread = np.sqrt(inclusion * (1 - inclusion) / 400) + 1e-3
    assert np.all(np.abs(seen - inclusion) < 5 * spread + 0.02), \
        np.abs(seen - inclusion).max()
