"""The transformer (encoder) block, post-LN (BERT) or pre-LN (GPT-2, T5).

Options cover the families built from it: LayerNorm or RMSNorm, projections
with or without biases, the attention-logit scale, a gated FFN (T5 v1.1)
and an additive attention bias (T5's relative positions). The defaults are
BERT's block, with the weights it always had.
"""

import keras

from kzoo.layers.activations import get_activation
from kzoo.layers.attention import MultiHeadAttention
from kzoo.layers.dense import FoldedDense
from kzoo.layers.dropout import Dropout
from kzoo.layers.normalization import normalization_layer


class TransformerBlock(keras.layers.Layer):
    """Self-attention + feed-forward with residuals and normalisation.

    Post-LN (`normalize_first=False`, BERT, BART):
        x = LN(x + Dropout(Attn(x)));  x = LN(x + Dropout(FFN(x)))
    Pre-LN (`normalize_first=True`, GPT-2, T5):
        x = x + Dropout(Attn(LN(x)));  x = x + Dropout(FFN(LN(x)))
    FFN(x) = output_dense(Dropout_act(act(intermediate_dense(x))))
        or, gated (T5 v1.1's `DenseGatedActDense`, GEGLU), with
        `act(intermediate_dense(x)) * intermediate_linear_dense(x)` inside
        (T5's `wi_0` and `wi_1`).

    Args:
        num_heads, intermediate_dim: attention heads and FFN width.
        activation: Hugging Face activation name of the FFN.
        dropout: dropout on the attention and FFN outputs.
        attention_dropout: dropout on the attention probabilities.
        layer_norm_epsilon: epsilon of every norm.
        normalize_first: pre-LN instead of post-LN.
        head_dim: width of each head; `None` is `hidden // num_heads`
            (T5's `d_kv` may differ).
        use_bias: biases on every projection (T5: none).
        attention_scale: the attention logit scale; `None` is
            `1 / sqrt(head_dim)`, T5 uses 1.0.
        normalization: `"layer_norm"` or `"rms_norm"` (T5).
        gated_feed_forward: the gated FFN (T5 v1.1) instead of the plain.
        activation_dropout: dropout after the FFN activation (BART's
            `activation_dropout`; T5 uses its `dropout_rate` here too).

    Call arguments: `x (batch, seq, hidden)`, and `attention_mask`,
    `attention_bias`, `cache`, `cache_index` as `MultiHeadAttention` takes
    them. Returns `x`, or `(x, cache)` with a cache.
    """

    def __init__(self, num_heads, intermediate_dim, activation="gelu",
                 dropout=0.1, attention_dropout=0.1, layer_norm_epsilon=1e-12,
                 normalize_first=False, kernel_initializer="glorot_uniform",
                 head_dim=None, use_bias=True, attention_scale=None,
                 normalization="layer_norm", gated_feed_forward=False,
                 activation_dropout=0.0, **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.intermediate_dim = int(intermediate_dim)
        self.activation = activation
        self.dropout = float(dropout)
        self.attention_dropout = float(attention_dropout)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.normalize_first = bool(normalize_first)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.head_dim = None if head_dim is None else int(head_dim)
        self.use_bias = bool(use_bias)
        self.attention_scale = (None if attention_scale is None
                                else float(attention_scale))
        self.normalization = normalization
        self.gated_feed_forward = bool(gated_feed_forward)
        self.activation_dropout = float(activation_dropout)
        self._activation_fn = get_activation(activation)
        normalization_layer(normalization, 1e-6)  # fails early on a bad name

    # ------------------------------------------------------------------
    # Building
    # ------------------------------------------------------------------
    def _head_dim(self, hidden_dim):
        if self.head_dim is not None:
            return self.head_dim
        if hidden_dim % self.num_heads:
            raise ValueError(
                f"hidden_dim ({hidden_dim}) must be divisible by num_heads "
                f"({self.num_heads}), or head_dim given.")
        return hidden_dim // self.num_heads

    def _attention_layer(self, name, input_shape):
        layer = MultiHeadAttention(
            self.num_heads, self._head_dim(input_shape[-1]),
            dropout=self.attention_dropout,
            kernel_initializer=self.kernel_initializer,
            use_bias=self.use_bias, scale=self.attention_scale,
            dtype=self.dtype_policy, name=name)
        layer.build(input_shape)
        return layer

    def _norm_layer(self, name, input_shape):
        layer = normalization_layer(self.normalization,
                                    self.layer_norm_epsilon,
                                    dtype=self.dtype_policy, name=name)
        layer.build(input_shape)
        return layer

    def _dense(self, name, units, input_shape):
        layer = FoldedDense(
            units, use_bias=self.use_bias,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name=name)
        layer.build(input_shape)
        return layer

    def build(self, input_shape):
        hidden_dim = input_shape[-1]
        inner_shape = tuple(input_shape[:-1]) + (self.intermediate_dim,)
        self.attention = self._attention_layer("attention", input_shape)
        self.attention_layer_norm = self._norm_layer(
            "attention_layer_norm", input_shape)
        self.intermediate_dense = self._dense(
            "intermediate_dense", self.intermediate_dim, input_shape)
        if self.gated_feed_forward:
            self.intermediate_linear_dense = self._dense(
                "intermediate_linear_dense", self.intermediate_dim,
                input_shape)
        self.output_dense = self._dense("output_dense", hidden_dim,
                                        inner_shape)
        self.output_layer_norm = self._norm_layer(
            "output_layer_norm", input_shape)
        # With the block's policy: a default (float32) Dropout would hand
        # float32 back into a float16 residual under mixed precision.
        self.dropout_layer = Dropout(
            self.dropout, dtype=self.dtype_policy)
        # Only when used: a Dropout with a rate holds a seed variable, and
        # the blocks of existing checkpoints have none.
        self.activation_dropout_layer = None
        if self.activation_dropout > 0:
            self.activation_dropout_layer = Dropout(
                self.activation_dropout, dtype=self.dtype_policy)
        self.built = True

    # ------------------------------------------------------------------
    # Sublayers (shared with TransformerDecoderBlock)
    # ------------------------------------------------------------------
    def _residual(self, residual, output, layer_norm, training):
        """Add a sublayer's output back; post-LN normalises the sum."""
        x = residual + self.dropout_layer(output, training=training)
        return x if self.normalize_first else layer_norm(x)

    def _self_attention_sublayer(self, x, attention_mask, attention_bias,
                                 cache, cache_index, training):
        h = self.attention_layer_norm(x) if self.normalize_first else x
        attended = self.attention(
            h, attention_mask=attention_mask, attention_bias=attention_bias,
            cache=cache, cache_index=cache_index, training=training)
        if cache is not None:
            attended, cache = attended
        return (self._residual(x, attended, self.attention_layer_norm,
                               training), cache)

    def _feed_forward(self, x, training):
        # (batch, seq, intermediate)
        hidden = self._activation_fn(self.intermediate_dense(x))
        if self.gated_feed_forward:
            hidden = hidden * self.intermediate_linear_dense(x)
        if self.activation_dropout_layer is not None:
            hidden = self.activation_dropout_layer(hidden, training=training)
        return self.output_dense(hidden)  # (batch, seq, hidden)

    def _feed_forward_sublayer(self, x, training):
        h = self.output_layer_norm(x) if self.normalize_first else x
        return self._residual(x, self._feed_forward(h, training),
                              self.output_layer_norm, training)

    def call(self, x, attention_mask=None, cache=None, cache_index=None,
             attention_bias=None, training=None):
        x, cache = self._self_attention_sublayer(
            x, attention_mask, attention_bias, cache, cache_index, training)
        x = self._feed_forward_sublayer(x, training)
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
            "head_dim": self.head_dim,
            "use_bias": self.use_bias,
            "attention_scale": self.attention_scale,
            "normalization": self.normalization,
            "gated_feed_forward": self.gated_feed_forward,
            "activation_dropout": self.activation_dropout,
        })
        return config
