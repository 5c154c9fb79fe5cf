"""Attention masks for decoders: causal, optionally combined with padding.

All masks are boolean, `True` where a query may attend to a key, shaped to
broadcast against `(batch, seq_q, seq_k)` (what `MultiHeadAttention` takes).
"""

import keras
from keras import ops


def causal_mask(query_length, key_length, start_index=0):
    """`(1, query_length, key_length)`: query `i` (at absolute position
    `start_index + i`) sees keys `0 .. start_index + i`.

    `start_index` may be a tensor (the decoding position with a cache).
    """
    queries = ops.arange(query_length, dtype="int32") + ops.cast(
        start_index, "int32")
    keys = ops.arange(key_length, dtype="int32")
    return ops.expand_dims(
        ops.greater_equal(ops.expand_dims(queries, 1),
                          ops.expand_dims(keys, 0)), 0)


class CausalPaddingMask(keras.layers.Layer):
    """`padding_mask (batch, seq)` -> `(batch, seq, seq)` boolean mask: a
    query sees itself, earlier positions, and no padding."""

    def call(self, padding_mask):
        length = ops.shape(padding_mask)[1]
        padding = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)
        return ops.logical_and(causal_mask(length, length), padding)

    def compute_output_shape(self, input_shape):
        return (input_shape[0], input_shape[1], input_shape[1])

    def compute_output_spec(self, padding_mask):
        shape = padding_mask.shape
        return keras.KerasTensor((shape[0], shape[1], shape[1]), dtype="bool")
