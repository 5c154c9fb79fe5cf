"""Token and position embeddings."""

import keras
import numpy as np
from keras import ops

from kzoo.layers.dense import folded_matmul


class TokenEmbedding(keras.layers.Embedding):
    """A token embedding whose matrix can also project hidden states back to
    vocabulary logits (weight tying, as BERT's MLM head and GPT-2's LM head
    do)."""

    def logits(self, hidden_states):
        # (batch, seq, hidden) @ (hidden, vocab) -> (batch, seq, vocab)
        return folded_matmul(hidden_states, ops.transpose(self.embeddings))


class RowDropoutEmbedding(TokenEmbedding):
    """A `TokenEmbedding` with embedding dropout (Gal & Ghahramani, 2016, as
    AWD-LSTM and fastai's `EmbeddingDropout` use it): in training, whole
    rows of the matrix are zeroed with probability `row_dropout` and the
    others scaled by `1 / (1 - row_dropout)`, one mask per call. A dropped
    word is dropped at every position of the batch, which plain dropout on
    the looked-up vectors would not do. Off in inference.

    Only the rows the batch looks up are masked (a `(vocabulary,)` mask
    gathered by id): the same function as masking the whole matrix, without
    materialising a second copy of it.

    Example:
    ```python
    embedding = kzoo.layers.RowDropoutEmbedding(100, 8, row_dropout=0.1)
    vectors = embedding(np.array([[3, 3, 7]]), training=True)
    # positions 0 and 1 (the same word) are both kept or both zero
    ```
    """

    def __init__(self, input_dim, output_dim, row_dropout=0.0, seed=None,
                 **kwargs):
        super().__init__(input_dim, output_dim, **kwargs)
        self.row_dropout = float(row_dropout)
        if not 0.0 <= self.row_dropout < 1.0:
            raise ValueError(f"{self.name}: row_dropout must be in [0, 1); "
                             f"got {row_dropout!r}.")
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed) \
            if self.row_dropout > 0 else None

    def call(self, inputs, training=None):
        outputs = super().call(inputs)
        if not training or self.row_dropout == 0:
            return outputs
        keep = keras.random.dropout(
            ops.ones((self.input_dim,), outputs.dtype), self.row_dropout,
            seed=self.seed_generator)  # (vocabulary,): 0 or 1 / (1 - p)
        ids = ops.cast(inputs, "int32")
        return outputs * ops.expand_dims(ops.take(keep, ids), -1)

    def get_config(self):
        config = super().get_config()
        config.update({"row_dropout": self.row_dropout, "seed": self.seed})
        return config


class PositionEmbedding(keras.layers.Layer):
    """Learned absolute position embeddings, sliced to the input length.

    Call with the hidden states (or token embeddings) of shape
    `(batch, seq, hidden)` and an optional `start_index` (used when decoding
    with a cache, one position at a time). Returns `(1, seq, hidden)` so it
    broadcasts over the batch.
    """

    def __init__(self, sequence_length, hidden_dim=None,
                 initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.sequence_length = int(sequence_length)
        self.hidden_dim = hidden_dim
        self.initializer = keras.initializers.get(initializer)

    def build(self, input_shape):
        hidden_dim = self.hidden_dim or input_shape[-1]
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(self.sequence_length, hidden_dim),
            initializer=self.initializer,
        )
        self.built = True

    def call(self, inputs, start_index=0):
        length = ops.shape(inputs)[1]
        positions = ops.slice(
            ops.convert_to_tensor(self.embeddings), (start_index, 0),
            (length, ops.shape(self.embeddings)[1]),
        )
        return ops.expand_dims(positions, 0)

    def compute_output_shape(self, input_shape):
        hidden_dim = self.hidden_dim or input_shape[-1]
        return (1, input_shape[1], hidden_dim)

    def get_config(self):
        config = super().get_config()
        config.update({
            "sequence_length": self.sequence_length,
            "hidden_dim": self.hidden_dim,
            "initializer": keras.initializers.serialize(self.initializer),
        })
        return config


def sinusoidal_position_table(length, dim):
    """The fixed sinusoidal position table of "Attention Is All You Need"
    as XLM and DistilBERT lay it out: row `pos`, column `j` holds
    `pos / 10000^(2 * (j // 2) / dim)`, through sin in the even columns and
    cos in the odd ones. Computed in float64, returned as float32 (as
    transformers' `create_sinusoidal_embeddings`)."""
    positions = np.arange(length, dtype="float64")[:, None]
    exponents = 2 * (np.arange(dim) // 2) / dim
    angles = positions / np.power(10000.0, exponents)[None, :]
    table = np.empty((length, dim), dtype="float64")
    table[:, 0::2] = np.sin(angles[:, 0::2])
    table[:, 1::2] = np.cos(angles[:, 1::2])
    return table.astype("float32")


@keras.saving.register_keras_serializable(package="kzoo")
class SinusoidalPositions(keras.initializers.Initializer):
    """Initializer of a `(positions, dim)` table with
    `sinusoidal_position_table`: a position embedding that starts (and,
    made non-trainable, stays) sinusoidal."""

    def __call__(self, shape, dtype=None):
        length, dim = shape
        return ops.cast(sinusoidal_position_table(length, dim),
                        dtype or "float32")

    def get_config(self):
        return {}


def token_and_position_embeddings(vocabulary_size, max_sequence_length,
                                  hidden_dim, initializer, dtype=None):
    """The token and learned position embedding layers a transformer family
    starts from, named `token_embedding` and `position_embedding` (the
    names the presets' weight files and the converters use)."""
    token_embedding = TokenEmbedding(
        vocabulary_size, hidden_dim, embeddings_initializer=initializer,
        dtype=dtype, name="token_embedding")
    position_embedding = PositionEmbedding(
        max_sequence_length, hidden_dim, initializer=initializer,
        dtype=dtype, name="position_embedding")
    return token_embedding, position_embedding
