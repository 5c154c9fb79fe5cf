"""Multi-head self-attention written with keras.ops.

One layer serves encoders (padding mask) and decoders (causal mask plus a
key/value cache). Projections are separate q/k/v dense layers, the layout of
the original BERT checkpoints, so conversion maps one tensor to one weight.
"""

import keras
from keras import ops


class MultiHeadAttention(keras.layers.Layer):
    """Scaled dot-product self-attention.

    Args:
        num_heads: number of attention heads.
        head_dim: size of each head; `num_heads * head_dim` is the width of
            the q/k/v projections.
        dropout: dropout on the attention probabilities (training only).
        kernel_initializer: initializer of the four projections.

    Call arguments:
        hidden_states: `(batch, seq, hidden)`.
        attention_mask: boolean, broadcastable to `(batch, seq_q, seq_k)`;
            `True` where a query may attend to a key.
        cache: optional `(batch, 2, max_len, num_heads, head_dim)` key/value
            cache; with it the layer returns `(output, updated_cache)`.
        cache_index: where the new keys/values are written in the cache.
    """

    def __init__(self, num_heads, head_dim, dropout=0.0,
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.head_dim = int(head_dim)
        self.dropout = float(dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.supports_masking = False

    def build(self, input_shape):
        width = self.num_heads * self.head_dim

        def dense(name, units):
            layer = keras.layers.Dense(
                units, kernel_initializer=self.kernel_initializer,
                dtype=self.dtype_policy, name=name)
            return layer

        self.query_dense = dense("query", width)
        self.key_dense = dense("key", width)
        self.value_dense = dense("value", width)
        self.output_dense = dense("output", input_shape[-1])
        for layer in (self.query_dense, self.key_dense, self.value_dense):
            layer.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (width,))
        self.dropout_layer = keras.layers.Dropout(
            self.dropout, dtype=self.dtype_policy)
        self.built = True

    def _split_heads(self, x):
        # (batch, seq, heads * head_dim) -> (batch, seq, heads, head_dim)
        shape = ops.shape(x)
        return ops.reshape(
            x, (shape[0], shape[1], self.num_heads, self.head_dim))

    def _attend(self, query, key, value, attention_mask, training):
        # query: (batch, seq_q, heads, head_dim); key/value: (batch, seq_k, ...)
        mask = None
        if attention_mask is not None:
            mask = ops.expand_dims(ops.cast(attention_mask, "bool"), 1)
        if training and self.dropout > 0:
            # The fused kernel has no dropout; training follows the original
            # (softmax, then dropout on the probabilities) explicitly.
            # Softmax in float32: under mixed precision -1e9 is -inf in
            # float16, and float16 softmax loses small probabilities.
            scale = 1.0 / (self.head_dim ** 0.5)
            scores = ops.cast(ops.einsum("bqhd,bkhd->bhqk", query, key),
                              "float32") * scale
            if mask is not None:
                scores = ops.where(mask, scores, -1e9)
            probs = ops.cast(ops.softmax(scores, axis=-1), query.dtype)
            probs = self.dropout_layer(probs, training=training)
            return ops.einsum("bhqk,bkhd->bqhd", probs, value)
        return ops.dot_product_attention(query, key, value, mask=mask)

    def call(self, hidden_states, attention_mask=None, cache=None,
             cache_index=None, training=None):
        query = self._split_heads(self.query_dense(hidden_states))
        key = self._split_heads(self.key_dense(hidden_states))
        value = self._split_heads(self.value_dense(hidden_states))

        if cache is not None:
            # Write this step's keys/values at cache_index, attend over all.
            # One slice_update of the whole cache: XLA does it in place,
            # and eager backends copy the cache once rather than three
            # times (two updates and a stack).
            update = ops.stack((key, value), axis=1)  # (batch, 2, T, h, d)
            cache = ops.slice_update(cache, [0, 0, cache_index, 0, 0], update)
            key, value = cache[:, 0], cache[:, 1]

        attended = self._attend(query, key, value, attention_mask, training)
        shape = ops.shape(attended)
        attended = ops.reshape(
            attended, (shape[0], shape[1], self.num_heads * self.head_dim))
        output = self.output_dense(attended)
        if cache is not None:
            return output, cache
        return output

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "head_dim": self.head_dim,
            "dropout": self.dropout,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
        })
        return config
