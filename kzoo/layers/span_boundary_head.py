"""SpanBERT's span boundary objective (SBO) head."""

import keras
from keras import ops

from kzoo.layers.activations import get_activation
from kzoo.layers.dense import FoldedDense


class SpanBoundaryHead(keras.layers.Layer):
    """Predicts each masked token of a span from the span's boundary tokens
    and the token's place in the span (SpanBERT, Joshi et al. 2020, eq. 1):

        h0 = [x_{s-1}; x_{e+1}; p_i]
        h1 = LayerNorm(act(W1 h0))
        y  = LayerNorm(act(W2 h1))

    then logits through the (tied) token embedding plus a bias, as the MLM
    head. `x_{s-1}`, `x_{e+1}` are the encoder's vectors at the positions
    left and right of the span; `p_i` a learned embedding of the token's
    offset in the span (0 for its first token).

    Args:
        token_embedding: the backbone's `TokenEmbedding`; its matrix is the
            output projection (referenced, not copied or tracked).
        activation: the MLP's activation (SpanBERT: the encoder's, GELU).
        layer_norm_epsilon: epsilon of both LayerNorms.
        max_span_length: rows of the offset table (SpanBERT: 20); offsets
            beyond it share the last row.
        position_embedding_dim: width of `p_i` (SpanBERT: 200).
        kernel_initializer: of both dense layers and the offset table.

    Call with `(sequence_output, left, right, relative)`: `(batch, seq,
    hidden)` and three `(batch, slots)` int tensors; returns `(batch, slots,
    vocab)` logits. Boundaries outside the row (-1, or the row's length:
    also where the boundary is [CLS], [SEP] or padding) are clipped into
    it; their slots carry no loss (the pretrainer weights them 0).
    """

    def __init__(self, token_embedding, activation="gelu",
                 layer_norm_epsilon=1e-12, max_span_length=20,
                 position_embedding_dim=200,
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        # Bypass Keras attribute tracking: the embedding is the backbone's,
        # so the task's weights do not store it twice (see TiedLMHead).
        self.__dict__["_token_embedding"] = token_embedding
        self.activation = activation
        self.layer_norm_epsilon = layer_norm_epsilon
        self.max_span_length = int(max_span_length)
        self.position_embedding_dim = int(position_embedding_dim)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation_fn = get_activation(activation)

    @property
    def token_embedding(self):
        return self.__dict__["_token_embedding"]

    def build(self, sequence_output_shape, *boundary_shapes):
        hidden_dim = sequence_output_shape[-1]
        self.position_embeddings = self.add_weight(
            name="position_embeddings",
            shape=(self.max_span_length, self.position_embedding_dim),
            initializer=self.kernel_initializer)
        input_dim = 2 * hidden_dim + self.position_embedding_dim
        self.dense_1 = FoldedDense(
            hidden_dim, kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="dense_1")
        self.dense_1.build((None, None, input_dim))
        self.layer_norm_1 = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy,
            name="layer_norm_1")
        self.layer_norm_1.build((None, None, hidden_dim))
        self.dense_2 = FoldedDense(
            hidden_dim, kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="dense_2")
        self.dense_2.build((None, None, hidden_dim))
        self.layer_norm_2 = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy,
            name="layer_norm_2")
        self.layer_norm_2.build((None, None, hidden_dim))
        self.bias = self.add_weight(
            name="bias", shape=(self.token_embedding.input_dim,),
            initializer="zeros")
        self.built = True

    def boundary_states(self, sequence_output, left, right, relative):
        """`h0 = [x_{s-1}; x_{e+1}; p_i]`: `(batch, slots, 2 hidden +
        position_embedding_dim)`."""
        last = ops.shape(sequence_output)[1] - 1

        def gather(positions):  # (batch, slots, hidden)
            positions = ops.clip(ops.cast(positions, "int32"), 0, last)
            return ops.take_along_axis(
                sequence_output, ops.expand_dims(positions, -1), axis=1)

        offsets = ops.clip(ops.cast(relative, "int32"), 0,
                           self.max_span_length - 1)
        offsets = ops.take(ops.cast(self.position_embeddings,
                                    sequence_output.dtype), offsets, axis=0)
        return ops.concatenate([gather(left), gather(right), offsets],
                               axis=-1)

    def call(self, sequence_output, left, right, relative):
        hidden = self.boundary_states(sequence_output, left, right, relative)
        hidden = self.layer_norm_1(self._activation_fn(self.dense_1(hidden)))
        hidden = self.layer_norm_2(self._activation_fn(self.dense_2(hidden)))
        return self.token_embedding.logits(hidden) + self.bias

    def compute_output_shape(self, sequence_output_shape, left_shape,
                             *shapes):
        return tuple(left_shape) + (self.token_embedding.input_dim,)

    def get_config(self):
        # The tied embedding is not config: the task passes it in again.
        config = super().get_config()
        config.update({
            "activation": self.activation,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "max_span_length": self.max_span_length,
            "position_embedding_dim": self.position_embedding_dim,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
        })
        return config
