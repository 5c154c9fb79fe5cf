"""MobileBERT's own layers: NoNorm, the trigram embedding input, the
bottleneck attention and the bottleneck block (Sun et al., 2020, as
`transformers`' `MobileBertModel` computes them).

A block reads the `hidden_dim`-wide stream (512 in the release), works at
`bottleneck_dim` (128) and writes back to `hidden_dim`:

    layer_input = NoNorm(dense(x))                       # input bottleneck
    shared = NoNorm(dense'(x))                           # query/key input
    a = NoNorm(attention(q=k=shared, v=x) + layer_input)
    a = FFN_k(a) for each of the `num_feedforward_networks` FFNs
        FFN(a) = NoNorm(output(act(intermediate(a))) + a)
    out = NoNorm(dropout(dense''(a)) + x)                # output bottleneck

NoNorm is an elementwise scale and shift (no statistics): the
replacement of LayerNorm that made MobileBERT fast on phones.
"""

import keras
from keras import ops

from kzoo.layers.activations import get_activation
from kzoo.layers.attention import MultiHeadAttention
from kzoo.layers.dense import FoldedDense
from kzoo.layers.dropout import Dropout


class NoNorm(keras.layers.Layer):
    """`x * gamma + beta`, elementwise: MobileBERT's `NoNorm` (its
    `normalization_type="no_norm"`). The weights are named as a
    LayerNormalization's, so conversion maps them the same way."""

    def build(self, input_shape):
        self.gamma = self.add_weight(name="gamma", shape=(input_shape[-1],),
                                     initializer="ones")
        self.beta = self.add_weight(name="beta", shape=(input_shape[-1],),
                                    initializer="zeros")
        self.built = True

    def call(self, x):
        return x * self.gamma + self.beta

    def compute_output_shape(self, input_shape):
        return input_shape


def trigram_windows(embeddings):
    """`(batch, seq, width)` -> `(batch, seq, 3 * width)`: at each position
    the next token's vector, its own, and the previous token's (zeros past
    either end), as MobileBERT's embeddings concatenate them before
    projecting to the hidden width (its "trigram input", a convolution of
    kernel 3 over the token vectors)."""
    following = ops.pad(embeddings[:, 1:], ((0, 0), (0, 1), (0, 0)))
    preceding = ops.pad(embeddings[:, :-1], ((0, 0), (1, 0), (0, 0)))
    return ops.concatenate([following, embeddings, preceding], axis=-1)


class BottleneckAttention(MultiHeadAttention):
    """`MultiHeadAttention` whose queries and keys come from one input
    (the shared bottleneck, `bottleneck_dim` wide) and values from another
    (the full `hidden_dim` stream): MobileBERT's self-attention with
    `key_query_shared_bottleneck`. Its output has the queries' width."""

    def build(self, query_shape, value_shape):
        width = self.num_heads * self.head_dim

        def dense(name, units, input_shape):
            layer = FoldedDense(
                units, use_bias=self.use_bias,
                kernel_initializer=self.kernel_initializer,
                dtype=self.dtype_policy, name=name)
            layer.build(input_shape)
            return layer

        self.query_dense = dense("query", width, query_shape)
        self.key_dense = dense("key", width, query_shape)
        self.value_dense = dense("value", width, value_shape)
        self.output_dense = dense("output", query_shape[-1],
                                  tuple(query_shape[:-1]) + (width,))
        self.dropout_layer = Dropout(
            self.dropout, dtype=self.dtype_policy)
        self.built = True

    def call(self, query_states, value_states, attention_mask=None,
             training=None):
        query = self._split_heads(self.query_dense(query_states))
        key = self._split_heads(self.key_dense(query_states))
        value = self._split_heads(self.value_dense(value_states))
        attended = self._attend(query, key, value, attention_mask, None,
                                training)  # (batch, seq, heads, head_dim)
        shape = ops.shape(attended)
        attended = ops.reshape(
            attended, (shape[0], shape[1], self.num_heads * self.head_dim))
        return self.output_dense(attended)

    def compute_output_shape(self, query_shape, value_shape=None):
        return query_shape


class BottleneckFeedForward(keras.layers.Layer):
    """One of a block's feed-forward networks at the bottleneck width:
    `NoNorm(output_dense(act(intermediate_dense(x))) + x)`."""

    def __init__(self, intermediate_dim, activation, kernel_initializer,
                 **kwargs):
        super().__init__(**kwargs)
        self.intermediate_dim = int(intermediate_dim)
        self.activation = activation
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation_fn = get_activation(activation)

    def build(self, input_shape):
        self.intermediate_dense = FoldedDense(
            self.intermediate_dim, kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="intermediate_dense")
        self.intermediate_dense.build(input_shape)
        self.output_dense = FoldedDense(
            input_shape[-1], kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="output_dense")
        self.output_dense.build(tuple(input_shape[:-1])
                                + (self.intermediate_dim,))
        self.norm = NoNorm(dtype=self.dtype_policy, name="norm")
        self.norm.build(input_shape)
        self.built = True

    def call(self, x):
        hidden = self._activation_fn(self.intermediate_dense(x))
        return self.norm(self.output_dense(hidden) + x)

    def compute_output_shape(self, input_shape):
        return input_shape


class MobileBertBlock(keras.layers.Layer):
    """One MobileBERT layer (see the module doc): `(batch, seq, hidden)` ->
    the same shape.

    Args:
        num_heads: attention heads over the bottleneck width.
        bottleneck_dim: the width inside the block (`intra_bottleneck_size`,
            = `true_hidden_size`).
        intermediate_dim: each feed-forward network's inner width.
        num_feedforward_networks: feed-forward networks per block (4).
        activation: their activation (ReLU in the release).
        dropout: on the output bottleneck's projection.
        attention_dropout: on the attention probabilities.
    """

    def __init__(self, num_heads, bottleneck_dim, intermediate_dim,
                 num_feedforward_networks, activation="relu", dropout=0.0,
                 attention_dropout=0.1, kernel_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.bottleneck_dim = int(bottleneck_dim)
        self.intermediate_dim = int(intermediate_dim)
        self.num_feedforward_networks = int(num_feedforward_networks)
        self.activation = activation
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    def _bottleneck(self, name, input_shape):
        """A dense layer to the bottleneck width and its NoNorm."""
        dense = FoldedDense(self.bottleneck_dim,
                            kernel_initializer=self.kernel_initializer,
                            dtype=self.dtype_policy, name=name)
        dense.build(input_shape)
        norm = NoNorm(dtype=self.dtype_policy, name=f"{name}_norm")
        norm.build(tuple(input_shape[:-1]) + (self.bottleneck_dim,))
        return dense, norm

    def build(self, input_shape):
        inner_shape = tuple(input_shape[:-1]) + (self.bottleneck_dim,)
        self.input_bottleneck, self.input_bottleneck_norm = \
            self._bottleneck("input_bottleneck", input_shape)
        self.attention_bottleneck, self.attention_bottleneck_norm = \
            self._bottleneck("attention_bottleneck", input_shape)
        self.attention = BottleneckAttention(
            self.num_heads, self.bottleneck_dim // self.num_heads,
            dropout=self.attention_dropout,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="attention")
        self.attention.build(inner_shape, input_shape)
        self.attention_norm = NoNorm(dtype=self.dtype_policy,
                                     name="attention_norm")
        self.attention_norm.build(inner_shape)
        self.feed_forward = []
        for index in range(self.num_feedforward_networks):
            layer = BottleneckFeedForward(
                self.intermediate_dim, self.activation,
                self.kernel_initializer, dtype=self.dtype_policy,
                name=f"feed_forward_{index}")
            layer.build(inner_shape)
            self.feed_forward.append(layer)
        self.output_bottleneck = FoldedDense(
            input_shape[-1], kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name="output_bottleneck")
        self.output_bottleneck.build(inner_shape)
        self.output_bottleneck_norm = NoNorm(
            dtype=self.dtype_policy, name="output_bottleneck_norm")
        self.output_bottleneck_norm.build(input_shape)
        self.dropout_layer = Dropout(self.dropout,
                                     dtype=self.dtype_policy)
        self.built = True

    def call(self, x, attention_mask=None, training=None):
        layer_input = self.input_bottleneck_norm(self.input_bottleneck(x))
        shared = self.attention_bottleneck_norm(self.attention_bottleneck(x))
        attended = self.attention(shared, x, attention_mask=attention_mask,
                                  training=training)
        h = self.attention_norm(attended + layer_input)
        for feed_forward in self.feed_forward:
            h = feed_forward(h)
        widened = self.dropout_layer(self.output_bottleneck(h),
                                     training=training)
        return self.output_bottleneck_norm(widened + x)

    def compute_output_shape(self, input_shape):
        return input_shape
