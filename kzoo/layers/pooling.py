"""Picking one position's vector per row: the text's summary for a
classifier that reads a causal decoder's output (GPT-2's, BART's)."""

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
