"""Losses shared by every task family.

Token-level objectives (masked LM, span masking, replaced-token detection,
span corruption, causal LM) all score a fixed number of slots per example,
of which only some are real: a short text at a long `sequence_length` has
few masks and many empty slots. The original BERT and `transformers`
average the loss over the real tokens (labels != -100), so the gradient of
a batch does not shrink with the number of empty slots. Every such
objective in kzoo uses `token_loss()` so they all normalise the same way:
sum(loss x weight) / sum(weight), the real tokens of the batch; and in a
pretraining step split over replicas or micro-batches, the real tokens of
the whole step (`kzoo.training.global_loss`).
"""

import keras
from keras import ops

from kzoo.training.global_loss import GlobalTokenMean

# Keras' name for sum(loss * sample_weight) / sum(sample_weight), with 0/0
# read as 0 (a batch with no real token contributes no loss).
PER_REAL_TOKEN = "mean_with_sample_weight"


class RankTwoSparseCrossentropy(keras.losses.SparseCategoricalCrossentropy):
    """Keras' sparse cross-entropy (same numbers on every backend),
    computed on the rank-2 view of the logits.

    Why the view: Keras on torch hands `cross_entropy` its classes on axis
    1, so a `(batch, slots, vocabulary)` tensor is moved to `(batch,
    vocabulary, slots)` and copied, and its gradient filled and copied
    back: ~0.3 s of a ~3.8 s BERT-small masked-LM step (32 x 24 masks,
    30,522 classes; scripts/benchmark_pretraining.py speed). On `(batch *
    slots, vocabulary)` the classes are axis 1 already.
    """

    def call(self, y_true, y_pred):
        slots = ops.shape(y_pred)[:-1]
        losses = super().call(ops.reshape(y_true, (-1,)),
                              ops.reshape(y_pred, (-1, ops.shape(y_pred)[-1])))
        return ops.reshape(losses, slots)


@keras.saving.register_keras_serializable(package="kzoo")
class TokenCrossentropy(GlobalTokenMean, RankTwoSparseCrossentropy):
    """Keras' sparse cross-entropy on the rank-2 view of the logits
    (`RankTwoSparseCrossentropy`), counted per step (`GlobalTokenMean`)."""


@keras.saving.register_keras_serializable(package="kzoo")
class BinaryTokenCrossentropy(GlobalTokenMean,
                              keras.losses.BinaryCrossentropy):
    """Keras' binary cross-entropy, counted per step (`GlobalTokenMean`)."""


def token_loss(name=None):
    """Sparse cross-entropy on logits, averaged over the real tokens of a
    batch (the slots whose sample weight is 1)."""
    return TokenCrossentropy(
        from_logits=True, reduction=PER_REAL_TOKEN,
        name=name or "sparse_categorical_crossentropy")


def binary_token_loss(name=None):
    """Binary cross-entropy on logits per token (replaced-token detection),
    averaged over the real tokens."""
    return BinaryTokenCrossentropy(
        from_logits=True, reduction=PER_REAL_TOKEN,
        name=name or "binary_crossentropy")
