"""Pooling a sequence into one vector per row: one position's vector (the
summary a classifier reads off a causal decoder, GPT-2's or BART's), or
the mean / first / maximum over the real tokens (sentence embeddings,
ELMo's classifier, probing)."""

import keras
from keras import ops


class LastTokenPooling(keras.layers.Layer):
    """`(batch, seq, hidden)`, `padding_mask (batch, seq)` -> the hidden
    state of each row's last real token, `(batch, hidden)`; with
    `token_id`, of each row's last real token equal to it (`token_ids`
    given), and of the last real token in a row without one.

    Padding must be on the right (as kzoo's preprocessors pad). A causal
    decoder's last token is the only one that has read the whole text,
    which is why GPT classifies from it rather than from the first; BART
    classifies from the decoder's state at the last `</s>` (`token_id=2`).

    Args:
        token_id: None (the last real token) or the token whose last
            occurrence is read.
    """

    def __init__(self, token_id=None, **kwargs):
        super().__init__(**kwargs)
        self.token_id = token_id

    def call(self, hidden_states, padding_mask, token_ids=None):
        real = ops.cast(padding_mask, "int32")
        last = ops.maximum(ops.sum(real, axis=1) - 1, 0)  # (batch,)
        if self.token_id is not None:
            # (batch, seq) positions 0.. (cumsum: no arange on a symbolic
            # length); -1 where the token is absent or padding.
            positions = ops.cumsum(ops.ones_like(real), axis=1) - 1
            hit = ops.cast(ops.equal(token_ids, self.token_id), "int32") * real
            last_hit = ops.max(hit * (positions + 1), axis=1) - 1
            last = ops.where(last_hit >= 0, last_hit, last)
        index = ops.reshape(last, (-1, 1, 1))
        return ops.squeeze(
            ops.take_along_axis(hidden_states, index, axis=1), 1)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape,
                             token_ids_shape=None):
        return (hidden_states_shape[0], hidden_states_shape[-1])

    def get_config(self):
        return {**super().get_config(), "token_id": self.token_id}


# How TokenPooling summarises the real tokens.
POOLING_MODES = ("mean", "cls", "max")


class TokenPooling(keras.layers.Layer):
    """`(batch, seq, hidden)` token vectors -> `(batch, hidden)`, counting
    only real (non-padding) tokens.

    mean: sum of real token vectors / number of real tokens (clamped at
        1e-9, as sentence-transformers does).
    cls: the first token's vector.
    max: the element-wise maximum over real tokens.
    """

    def __init__(self, mode="mean", **kwargs):
        super().__init__(**kwargs)
        if mode not in POOLING_MODES:
            raise ValueError(f"pooling must be one of {POOLING_MODES}; got "
                             f"{mode!r}.")
        self.mode = mode

    def call(self, sequence_output, padding_mask):
        if self.mode == "cls":
            return sequence_output[:, 0, :]
        mask = ops.expand_dims(ops.cast(padding_mask, sequence_output.dtype),
                               -1)  # (batch, seq, 1)
        if self.mode == "max":
            very_low = ops.cast(-1e9, sequence_output.dtype)
            return ops.max(ops.where(mask > 0, sequence_output, very_low),
                           axis=1)
        # Summed in float32: under a bfloat16 policy a count above 256 (or
        # a long sum of vectors) would round.
        mask = ops.cast(mask, "float32")
        total = ops.sum(ops.cast(sequence_output, "float32") * mask,
                        axis=1)  # (batch, hidden)
        count = ops.maximum(ops.sum(mask, axis=1), 1e-9)  # (batch, 1)
        return ops.cast(total / count, sequence_output.dtype)

    def compute_output_shape(self, sequence_output_shape, padding_mask_shape):
        return (sequence_output_shape[0], sequence_output_shape[-1])

    def get_config(self):
        return {**super().get_config(), "mode": self.mode}


class L2Normalize(keras.layers.Layer):
    """x / max(||x||, 1e-12) along the last axis (torch's F.normalize)."""

    def call(self, x):
        # The norm in float32, whatever the compute dtype (a bfloat16 sum
        # of hundreds of squares rounds).
        wide = ops.cast(x, "float32")
        norm = ops.sqrt(ops.sum(ops.square(wide), axis=-1, keepdims=True))
        return ops.cast(wide / ops.maximum(norm, 1e-12), x.dtype)
