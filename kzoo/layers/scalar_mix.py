"""ELMo's scalar mix of a model's layers."""

import keras
from keras import ops


class ScalarMix(keras.layers.Layer):
    """`gamma * sum_j softmax(s)_j * h_j` over stacked layers `h_j`, with
    the layer weights `s` (zeros: an even mix at first) and the scale
    `gamma` (1) learned (Peters et al., 2018, eq. 1).

    With `normalize_layers=True` each layer is first normalised to zero
    mean and unit variance, the statistics taken over every value of the
    layer at the real (unpadded) tokens of the batch, as the original
    (allennlp's `ScalarMix(do_layer_norm=True)`) does.

    Args:
        num_layers: how many layers are mixed.
        normalize_layers: normalise each layer first (needs the mask).

    Call: `(layers, padding_mask=None)`, layers
    `(batch, num_layers, seq, dim)` -> `(batch, seq, dim)`.

    Example:
    ```python
    mix = kzoo.layers.ScalarMix(3)
    mix(np.ones((2, 3, 5, 8), "float32")).shape  # (2, 5, 8)
    ```
    """

    epsilon = 1e-12

    def __init__(self, num_layers, normalize_layers=False, **kwargs):
        super().__init__(**kwargs)
        self.num_layers = int(num_layers)
        self.normalize_layers = bool(normalize_layers)

    def build(self, layers_shape, padding_mask_shape=None):
        self.layer_weights = self.add_weight(
            name="layer_weights", shape=(self.num_layers,),
            initializer="zeros")
        self.gamma = self.add_weight(name="gamma", shape=(),
                                     initializer="ones")
        self.built = True

    def call(self, layers, padding_mask=None):
        if self.normalize_layers:
            if padding_mask is None:
                raise ValueError(
                    f"{self.name}: normalize_layers=True needs the "
                    "padding_mask (the statistics are over real tokens).")
            layers = self._normalize(layers, padding_mask)
        weights = ops.softmax(self.layer_weights)  # (num_layers,)
        mixed = ops.einsum("l,blsd->bsd", ops.cast(weights, layers.dtype),
                           layers)
        return ops.cast(self.gamma, layers.dtype) * mixed

    def _normalize(self, layers, padding_mask):
        mask = ops.cast(padding_mask, layers.dtype)[:, None, :, None]
        count = ops.sum(mask) * ops.cast(ops.shape(layers)[-1], layers.dtype)
        count = ops.maximum(count, 1.0)
        mean = ops.sum(layers * mask, axis=(0, 2, 3), keepdims=True) / count
        variance = ops.sum(ops.square((layers - mean) * mask),
                           axis=(0, 2, 3), keepdims=True) / count
        return (layers - mean) / ops.sqrt(variance + self.epsilon)

    def compute_output_shape(self, layers_shape, padding_mask_shape=None):
        return (layers_shape[0],) + tuple(layers_shape[2:])

    def get_config(self):
        config = super().get_config()
        config.update({"num_layers": self.num_layers,
                       "normalize_layers": self.normalize_layers})
        return config
