"""The transformer block, post-LN (BERT) or pre-LN (GPT-2)."""

import keras

from kzoo.layers.activations import get_activation
from kzoo.layers.attention import MultiHeadAttention


class TransformerBlock(keras.layers.Layer):
    """Self-attention + feed-forward with residuals and LayerNorm.

    Post-LN (`normalize_first=False`, BERT):
        x = LN(x + Dropout(Attn(x)));  x = LN(x + Dropout(FFN(x)))
    Pre-LN (`normalize_first=True`, GPT-2):
        x = x + Dropout(Attn(LN(x)));  x = x + Dropout(FFN(LN(x)))

    Args:
        num_heads, intermediate_dim: attention heads and FFN width.
        activation: Hugging Face activation name of the FFN.
        dropout: dropout on the attention and FFN outputs.
        attention_dropout: dropout on the attention probabilities.
        layer_norm_epsilon: epsilon of both LayerNorms.
        normalize_first: pre-LN instead of post-LN.
    """

    def __init__(self, num_heads, intermediate_dim, activation="gelu",
                 dropout=0.1, attention_dropout=0.1, layer_norm_epsilon=1e-12,
                 normalize_first=False, kernel_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.intermediate_dim = int(intermediate_dim)
        self.activation = activation
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.normalize_first = bool(normalize_first)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self._activation_fn = get_activation(activation)

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        if hidden_dim % self.num_heads:
            raise ValueError(
                f"hidden_dim ({hidden_dim}) must be divisible by num_heads "
                f"({self.num_heads}).")
        init = self.kernel_initializer
        policy = self.dtype_policy
        self.attention = MultiHeadAttention(
            self.num_heads, hidden_dim // self.num_heads,
            dropout=self.attention_dropout, kernel_initializer=init,
            dtype=policy, name="attention")
        self.attention.build(input_shape)
        self.attention_layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=policy,
            name="attention_layer_norm")
        self.attention_layer_norm.build(input_shape)
        self.intermediate_dense = keras.layers.Dense(
            self.intermediate_dim, kernel_initializer=init, dtype=policy,
            name="intermediate_dense")
        self.intermediate_dense.build(input_shape)
        self.output_dense = keras.layers.Dense(
            hidden_dim, kernel_initializer=init, dtype=policy,
            name="output_dense")
        self.output_dense.build(
            tuple(input_shape[:-1]) + (self.intermediate_dim,))
        self.output_layer_norm = keras.layers.LayerNormalization(
            epsilon=self.layer_norm_epsilon, dtype=policy,
            name="output_layer_norm")
        self.output_layer_norm.build(input_shape)
        # With the block's policy: a default (float32) Dropout would hand
        # float32 back into a float16 residual under mixed precision.
        self.dropout_layer = keras.layers.Dropout(self.dropout, dtype=policy)
        self.built = True

    def _feed_forward(self, x, training):
        x = self._activation_fn(self.intermediate_dense(x))
        return self.dropout_layer(self.output_dense(x), training=training)

    def call(self, x, attention_mask=None, cache=None, cache_index=None,
             training=None):
        residual = x
        if self.normalize_first:
            x = self.attention_layer_norm(x)
        attended = self.attention(
            x, attention_mask=attention_mask, cache=cache,
            cache_index=cache_index, training=training)
        if cache is not None:
            attended, cache = attended
        x = residual + self.dropout_layer(attended, training=training)
        if self.normalize_first:
            x = x + self._feed_forward(self.output_layer_norm(x), training)
        else:
            x = self.attention_layer_norm(x)
            x = self.output_layer_norm(x + self._feed_forward(x, training))
        if cache is not None:
            return x, cache
        return x

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "intermediate_dim": self.intermediate_dim,
            "activation": self.activation,
            "dropout": self.dropout,
            "attention_dropout": self.attention_dropout,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "normalize_first": self.normalize_first,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
        })
        return config
