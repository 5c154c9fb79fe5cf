"""Multi-head attention written with keras.ops.

One layer serves every family: encoders (padding mask), decoders (causal
mask plus a key/value cache) and cross-attention (keys/values from another
sequence, optionally projected once and reused every decoding step).
Projections are separate q/k/v dense layers, the layout of the original
BERT checkpoints, so conversion maps one tensor to one weight; T5 drops
their biases (`use_bias=False`) and the logit scaling (`scale=1.0`), and
adds a relative position bias (`attention_bias=`).
"""

import keras
from keras import ops

from kzoo.layers import kv_cache
from kzoo.layers.dense import FoldedDense
from kzoo.layers.dropout import Dropout


class MultiHeadAttention(keras.layers.Layer):
    """Scaled dot-product attention.

    Args:
        num_heads: number of attention heads.
        head_dim: size of each head; `num_heads * head_dim` is the width of
            the q/k/v projections (T5's `d_kv` need not divide the hidden
            size).
        dropout: dropout on the attention probabilities (training only).
        kernel_initializer: initializer of the four projections.
        use_bias: whether the four projections have biases (T5: no).
        scale: multiplies the query-key logits; `None` is
            `1 / sqrt(head_dim)`. T5 uses 1.0 (its initialisation folds the
            scaling into the query weights).

    Call arguments:
        hidden_states: `(batch, seq_q, hidden)`, the queries (and, for
            self-attention, the keys and values).
        attention_mask: boolean, broadcastable to `(batch, seq_q, seq_k)`;
            `True` where a query may attend to a key.
        attention_bias: float, broadcastable to `(batch, heads, seq_q,
            seq_k)`, added to the logits (a relative position bias).
        cache: optional `(batch, 2, max_len, num_heads, head_dim)`
            self-attention key/value cache; with it the layer returns
            `(output, updated_cache)`.
        cache_index: where the new keys/values are written in the cache.
        context: `(batch, seq_k, hidden)`: cross-attention, keys and values
            are projected from it instead of from `hidden_states`.
        context_cache: `(batch, 2, seq_k, num_heads, head_dim)`, the
            keys/values of a context already projected by
            `compute_context_cache`: cross-attention without projecting the
            context again (decoding reuses it every step). Never updated,
            so it is not returned.
    """

    def __init__(self, num_heads, head_dim, dropout=0.0,
                 kernel_initializer="glorot_uniform", use_bias=True,
                 scale=None, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.head_dim = int(head_dim)
        self.dropout = float(dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.use_bias = bool(use_bias)
        self.scale = None if scale is None else float(scale)
        self.supports_masking = False

    @property
    def logit_scale(self):
        return (1.0 / (self.head_dim ** 0.5) if self.scale is None
                else self.scale)

    def build(self, input_shape):
        # The context (cross-attention) must have the width of the queries:
        # true of every encoder-decoder here (T5, BART).
        width = self.num_heads * self.head_dim

        def dense(name, units):
            layer = FoldedDense(
                units, use_bias=self.use_bias,
                kernel_initializer=self.kernel_initializer,
                dtype=self.dtype_policy, name=name)
            return layer

        self.query_dense = dense("query", width)
        self.key_dense = dense("key", width)
        self.value_dense = dense("value", width)
        self.output_dense = dense("output", input_shape[-1])
        for layer in (self.query_dense, self.key_dense, self.value_dense):
            layer.build(input_shape)
        self.output_dense.build(tuple(input_shape[:-1]) + (width,))
        self.dropout_layer = Dropout(
            self.dropout, dtype=self.dtype_policy)
        self.built = True

    def _split_heads(self, x):
        # (batch, seq, heads * head_dim) -> (batch, seq, heads, head_dim)
        shape = ops.shape(x)
        return ops.reshape(
            x, (shape[0], shape[1], self.num_heads, self.head_dim))

    def compute_context_cache(self, context):
        """`context (batch, seq_k, hidden)` -> its keys and values,
        `(batch, 2, seq_k, num_heads, head_dim)` (the layout of the
        self-attention cache), to pass as `context_cache`."""
        key = self._split_heads(self.key_dense(context))
        value = self._split_heads(self.value_dense(context))
        return ops.stack((key, value), axis=1)

    def _attend(self, query, key, value, attention_mask, attention_bias,
                training):
        # query: (batch, seq_q, heads, head_dim); key/value: (batch, seq_k, ...)
        mask = None
        if attention_mask is not None:
            # (batch, 1, seq_q, seq_k)
            mask = ops.expand_dims(ops.cast(attention_mask, "bool"), 1)
        dropout = bool(training) and self.dropout > 0
        if attention_bias is None and not dropout:
            return ops.dot_product_attention(query, key, value, mask=mask,
                                             scale=self.scale)
        # The fused kernel has no dropout, and on torch takes a bias or a
        # mask but not both; these cases follow the original explicitly
        # (logits + bias, softmax, dropout on the probabilities).
        # Softmax in float32: under mixed precision -1e9 is -inf in
        # float16, and float16 softmax loses small probabilities.
        scores = ops.cast(ops.einsum("bqhd,bkhd->bhqk", query, key),
                          "float32") * self.logit_scale  # (b, h, q, k)
        if attention_bias is not None:
            scores = scores + ops.cast(attention_bias, "float32")
        if mask is not None:
            scores = ops.where(mask, scores, -1e9)
        if scores.shape[-1] == 1:
            # One key (a decoder's first position): probability 1, without
            # the warning Keras gives for a softmax over one element.
            probs = ops.ones_like(scores, dtype=query.dtype)
        else:
            probs = ops.cast(ops.softmax(scores, axis=-1), query.dtype)
        probs = self.dropout_layer(probs, training=training)
        return ops.einsum("bhqk,bkhd->bqhd", probs, value)

    def call(self, hidden_states, attention_mask=None, cache=None,
             cache_index=None, attention_bias=None, context=None,
             context_cache=None, training=None):
        if cache is not None and (context is not None
                                  or context_cache is not None):
            raise ValueError(
                "MultiHeadAttention: `cache` is the self-attention cache; "
                "cross-attention takes `context` or `context_cache`.")
        query = self._split_heads(self.query_dense(hidden_states))

        if context_cache is not None:
            key, value = context_cache[:, 0], context_cache[:, 1]
        else:
            source = hidden_states if context is None else context
            key = self._split_heads(self.key_dense(source))
            value = self._split_heads(self.value_dense(source))

        if cache is not None:
            # Write this step's keys/values at cache_index, attend over all.
            # One write of the whole cache: XLA does it in place, and eager
            # backends copy the cache once rather than three times (two
            # updates and a stack), or not at all (kv_cache.py).
            update = ops.stack((key, value), axis=1)  # (batch, 2, T, h, d)
            cache = kv_cache.write(cache, update, cache_index)
            key, value = cache[:, 0], cache[:, 1]

        attended = self._attend(query, key, value, attention_mask,
                                attention_bias, training)
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
            "use_bias": self.use_bias,
            "scale": self.scale,
        })
        return config
