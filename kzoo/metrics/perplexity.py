"""Perplexity of a language model, accumulated over an epoch."""

import keras
from keras import ops


class Perplexity(keras.metrics.Metric):
    """exp(mean cross-entropy) over the weighted (real) tokens seen, from
    logits and integer targets."""

    def __init__(self, name="perplexity", **kwargs):
        super().__init__(name=name, **kwargs)
        self.total = self.add_variable(shape=(), initializer="zeros",
                                       name="total")
        self.count = self.add_variable(shape=(), initializer="zeros",
                                       name="count")

    def update_state(self, y_true, y_pred, sample_weight=None):
        losses = keras.losses.sparse_categorical_crossentropy(
            y_true, y_pred, from_logits=True)
        weights = ops.ones_like(losses) if sample_weight is None else \
            ops.cast(sample_weight, losses.dtype)
        self.total.assign_add(ops.sum(losses * weights))
        self.count.assign_add(ops.sum(weights))

    def result(self):
        return ops.exp(self.total / ops.maximum(self.count, 1.0))

    def reset_state(self):
        self.total.assign(0.0)
        self.count.assign(0.0)
