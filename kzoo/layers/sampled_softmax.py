"""Sampled softmax (Jean et al., 2015), as ELMo's biLM was trained: in
training, each token's loss is a softmax over its target and one shared
sample of distinct negative words, instead of over the whole vocabulary
(793,471 words for the original: the full softmax would be most of the
cost).

The negatives are drawn from the log-uniform (Zipfian) distribution
P(k) = log((k + 2) / (k + 1)) / log(V + 1), which fits a vocabulary
sorted by frequency, as ELMo's is; every candidate's logit is
corrected by the log of its expected count in the sample, and a sampled
word equal to the target is taken out ("accidental hits"). The loss is
what `tf.nn.sampled_softmax_loss` (the original's) computes on the same
draws and expected counts (a test checks it); written in `keras.ops` to
run on every backend.
"""

import math

import keras
import numpy as np
from keras import ops

# Added to an accidental hit's logit: exp() of it is exactly 0 in float32.
_HIT_PENALTY = -1e9


def log_uniform_log_probability(ids, vocabulary_size):
    """log P(id) under the log-uniform distribution over `vocabulary_size`
    ids."""
    ids = ops.cast(ids, "float32")
    return (ops.log(ops.log((ids + 2.0) / (ids + 1.0)))
            - math.log(math.log(vocabulary_size + 1.0)))


class LogUniformSampler(keras.layers.Layer):
    """Draws `num_samples` distinct word ids (shared by the whole batch)
    from the log-uniform distribution over `vocabulary_size` ids, with a
    seed generator: fresh draws at every training step, on every backend
    (the draw runs in the forward pass, where Keras keeps the generator's
    state). The input only anchors the layer in the graph.

    Distinct, as the original's sampler (`unique=True`): it drew until it
    had `num_samples` different ids, which is sampling without replacement;
    here the same distribution comes from one top-k over log P + Gumbel
    noise (fixed shapes, no loop). A candidate's expected count is then the
    chance it is in the sample, 1 - (1 - P(k))^n for the n draws such a
    sample takes: TensorFlow uses the n of each step, here n is the number
    of draws that gives `num_samples` distinct ids on average (solved once).
    """

    def __init__(self, vocabulary_size, num_samples, seed=None, **kwargs):
        super().__init__(**kwargs)
        if not 0 < num_samples < vocabulary_size:
            raise ValueError(
                f"LogUniformSampler: num_samples={num_samples} must be "
                f"between 1 and the vocabulary size ({vocabulary_size}) - 1.")
        self.vocabulary_size = int(vocabulary_size)
        self.num_samples = int(num_samples)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)
        self.num_tries = _draws_for_distinct(self.vocabulary_size,
                                             self.num_samples)

    def call(self, anchor):
        log_p = log_uniform_log_probability(
            ops.arange(self.vocabulary_size), self.vocabulary_size)
        u = keras.random.uniform((self.vocabulary_size,), minval=1e-20,
                                 maxval=1.0, seed=self.seed_generator)
        gumbel = -ops.log(-ops.log(u))
        _, ids = ops.top_k(log_p + gumbel, self.num_samples)
        return ops.cast(ids, "int32")

    def compute_output_spec(self, anchor):
        return keras.KerasTensor((self.num_samples,), dtype="int32")

    def log_expected_count(self, ids):
        """log of the chance that each id is in a sample."""
        log_p = log_uniform_log_probability(ids, self.vocabulary_size)
        return ops.log(-ops.expm1(self.num_tries * ops.log1p(
            -ops.exp(log_p))))

    def get_config(self):
        return {**super().get_config(),
                "vocabulary_size": self.vocabulary_size,
                "num_samples": self.num_samples, "seed": self.seed}


def _draws_for_distinct(vocabulary_size, num_samples):
    """The n with sum_k 1 - (1 - P(k))^n = num_samples (bisection)."""
    k = np.arange(vocabulary_size, dtype="float64")
    p = np.log((k + 2) / (k + 1)) / np.log(vocabulary_size + 1.0)

    def distinct(n):
        return np.sum(-np.expm1(n * np.log1p(-p)))

    low, high = float(num_samples), float(num_samples)
    while distinct(high) < num_samples:
        high *= 2
    for _ in range(100):
        middle = (low + high) / 2
        low, high = (middle, high) if distinct(middle) < num_samples \
            else (low, middle)
    return (low + high) / 2


def sampled_softmax_losses(hidden, targets, kernel, bias, candidates,
                           log_expected_count):
    """Per-token sampled-softmax losses.

    Args:
        hidden: `(..., dim)` the vectors the softmax reads.
        targets: `(...)` integer target ids.
        kernel, bias: the full softmax's `(dim, vocabulary)` kernel and
            `(vocabulary,)` bias (a `Dense` layer's).
        candidates: `(num_samples,)` distinct sampled ids.
        log_expected_count: ids -> log of their expected count in the
            sample (`LogUniformSampler.log_expected_count`).

    Returns `(...)` losses: the cross-entropy of the target among the
    target and the candidates, with logits corrected by log(expected
    count) and accidental hits removed.
    """
    dim = ops.shape(hidden)[-1]
    flat = ops.reshape(ops.cast(hidden, "float32"), (-1, dim))
    flat_targets = ops.reshape(ops.cast(targets, "int32"), (-1,))
    kernel = ops.cast(kernel, "float32")
    bias = ops.cast(bias, "float32")

    true_logits = (ops.sum(flat * ops.transpose(
        ops.take(kernel, flat_targets, axis=1)), axis=-1)
        + ops.take(bias, flat_targets)
        - log_expected_count(flat_targets))
    sampled_logits = (ops.matmul(flat, ops.take(kernel, candidates, axis=1))
                      + ops.take(bias, candidates)
                      - log_expected_count(candidates))
    hits = ops.equal(ops.expand_dims(flat_targets, 1),
                     ops.expand_dims(candidates, 0))
    sampled_logits = ops.where(hits, sampled_logits + _HIT_PENALTY,
                               sampled_logits)
    logits = ops.concatenate([ops.expand_dims(true_logits, 1),
                              sampled_logits], axis=1)
    losses = ops.logsumexp(logits, axis=1) - true_logits
    return ops.reshape(losses, ops.shape(targets))
