"""RMSNorm (T5's LayerNorm) and the choice between it and LayerNorm.

Blocks take `normalization="layer_norm"` (BERT, GPT-2, BART) or
`"rms_norm"` (T5) and build their norms through `normalization_layer`, so a
family picks its norm by config instead of by subclass.
"""

import keras
from keras import ops

NORMALIZATIONS = ("layer_norm", "rms_norm")


class RMSNorm(keras.layers.Layer):
    """Root-mean-square normalisation (Zhang & Sennrich, 2019), as T5 uses:
    `x / sqrt(mean(x^2) + epsilon) * scale`, with no mean subtraction and
    no bias.

    The mean of squares is taken in float32 whatever the compute dtype
    (T5 does the same): squares of large float16 activations overflow.

    Args:
        epsilon: added to the mean of squares (T5: `layer_norm_epsilon`,
            1e-6).

    Call: `(..., hidden)` -> the same shape, in the compute dtype.
    """

    def __init__(self, epsilon=1e-6, **kwargs):
        super().__init__(**kwargs)
        self.epsilon = float(epsilon)

    def build(self, input_shape):
        self.scale = self.add_weight(
            name="scale", shape=(input_shape[-1],), initializer="ones")
        self.built = True

    def call(self, x):
        x32 = ops.cast(x, "float32")
        variance = ops.mean(ops.square(x32), axis=-1, keepdims=True)  # (..., 1)
        normed = x32 * ops.rsqrt(variance + self.epsilon)
        return (ops.cast(normed, self.compute_dtype)
                * ops.cast(self.scale, self.compute_dtype))

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config["epsilon"] = self.epsilon
        return config


def normalization_layer(kind, epsilon, dtype=None, name=None):
    """A `"layer_norm"` (keras LayerNormalization: mean and variance, scale
    and bias) or an `"rms_norm"` (`RMSNorm`)."""
    if kind == "layer_norm":
        return keras.layers.LayerNormalization(
            epsilon=epsilon, dtype=dtype, name=name)
    if kind == "rms_norm":
        return RMSNorm(epsilon=epsilon, dtype=dtype, name=name)
    raise ValueError(
        f"Unknown normalization {kind!r}; use one of {NORMALIZATIONS}.")
