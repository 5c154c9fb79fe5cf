"""A character-level CNN word encoder (Kim et al., 2016), as ELMo's."""

import keras
from keras import ops

from kzoo.layers.activations import get_activation


class CharacterCNN(keras.layers.Layer):
    """Character ids of each token -> one vector per token: embed every
    character, run a bank of 1-D convolutions over the characters of the
    token (no padding), max-pool each filter over the positions, add its
    bias and apply the activation, then concatenate the filters.

    Bias and activation after the max-pool, as the original ELMo code: for
    the monotonic activations it uses (relu, tanh) this is the same as
    before it, and cheaper.

    Args:
        num_characters: size of the character table (ELMo: 262, id 0 for
            the characters of a padding token).
        embedding_dim: width of a character vector.
        filters: `[[width, count], ...]`, one convolution per pair.
        activation: applied to each pooled filter (ELMo: relu or tanh).
        embeddings_initializer, kernel_initializer: how new weights start.

    Call: int ids `(batch, tokens, characters)` ->
    `(batch, tokens, sum of the counts)`. Every width must be at most the
    number of characters per token.

    Example:
    ```python
    cnn = kzoo.layers.CharacterCNN(262, 16, filters=[[1, 32], [2, 32]])
    cnn(np.ones((2, 5, 50), "int32")).shape  # (2, 5, 64)
    ```
    """

    def __init__(self, num_characters, embedding_dim, filters,
                 activation="relu",
                 embeddings_initializer=keras.initializers.RandomUniform(
                     -1.0, 1.0),
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.num_characters = int(num_characters)
        self.embedding_dim = int(embedding_dim)
        self.filters = [[int(w), int(n)] for w, n in filters]
        self.activation = activation
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation = get_activation(activation)

    @property
    def output_dim(self):
        return sum(n for _, n in self.filters)

    def build(self, input_shape):
        self.embeddings = self.add_weight(
            name="embeddings", shape=(self.num_characters, self.embedding_dim),
            initializer=self.embeddings_initializer)
        self.kernels, self.biases = [], []
        for i, (width, count) in enumerate(self.filters):
            self.kernels.append(self.add_weight(
                name=f"kernel_{i}", shape=(width, self.embedding_dim, count),
                initializer=self.kernel_initializer))
            self.biases.append(self.add_weight(
                name=f"bias_{i}", shape=(count,), initializer="zeros"))
        self.built = True

    def call(self, character_ids):
        shape = ops.shape(character_ids)
        batch, tokens, chars = shape[0], shape[1], shape[2]
        ids = ops.reshape(ops.cast(character_ids, "int32"), (-1, chars))
        x = ops.take(self.embeddings, ids, axis=0)  # (batch*tokens, chars, emb)
        pooled = []
        for kernel, bias in zip(self.kernels, self.biases):
            conv = ops.conv(x, kernel, strides=1, padding="valid",
                            data_format="channels_last")  # (b*t, positions, n)
            pooled.append(self._activation(ops.max(conv, axis=1) + bias))
        features = ops.concatenate(pooled, axis=-1)  # (batch*tokens, filters)
        return ops.reshape(features, (batch, tokens, self.output_dim))

    def compute_output_shape(self, input_shape):
        return tuple(input_shape[:2]) + (self.output_dim,)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_characters": self.num_characters,
            "embedding_dim": self.embedding_dim, "filters": self.filters,
            "activation": self.activation,
            "embeddings_initializer": keras.initializers.serialize(
                self.embeddings_initializer),
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer)})
        return config
