"""Highway layers (Srivastava et al., 2015), as ELMo's character encoder
uses them."""

import keras
from keras import ops

from kzoo.layers.activations import get_activation


class Highway(keras.layers.Layer):
    """A stack of highway layers, each `y = g * f(x W_t + b_t) + (1 - g) * x`
    with the gate `g = sigmoid(x W_g + b_g)`.

    The gate multiplies the *transform*, and `1 - g` the input: the
    convention of the original ELMo code (bilm-tf), whose gate weights are
    named `W_carry`/`b_carry` although they gate the transform (allennlp
    negates them to load them into its opposite convention). Starting the
    gate bias negative (`gate_bias_initializer`) makes a new layer carry
    its input through at first.

    Args:
        num_layers: number of highway layers.
        activation: `f`, the transform's activation (ELMo: relu).
        kernel_initializer, gate_bias_initializer: how new weights start.

    Call: `(..., dim)` -> `(..., dim)`.

    Example:
    ```python
    highway = kzoo.layers.Highway(num_layers=2)
    highway(np.ones((3, 8), "float32")).shape  # (3, 8)
    ```
    """

    def __init__(self, num_layers, activation="relu",
                 kernel_initializer="glorot_uniform",
                 gate_bias_initializer="zeros", **kwargs):
        super().__init__(**kwargs)
        self.num_layers = int(num_layers)
        self.activation = activation
        self.kernel_initializer = keras.initializers.get(kernel_initializer)
        self.gate_bias_initializer = keras.initializers.get(
            gate_bias_initializer)
        self._activation = get_activation(activation)

    def build(self, input_shape):
        dim = input_shape[-1]
        self.transform_kernels, self.transform_biases = [], []
        self.gate_kernels, self.gate_biases = [], []
        for i in range(self.num_layers):
            self.transform_kernels.append(self.add_weight(
                name=f"transform_kernel_{i}", shape=(dim, dim),
                initializer=self.kernel_initializer))
            self.transform_biases.append(self.add_weight(
                name=f"transform_bias_{i}", shape=(dim,),
                initializer="zeros"))
            self.gate_kernels.append(self.add_weight(
                name=f"gate_kernel_{i}", shape=(dim, dim),
                initializer=self.kernel_initializer))
            self.gate_biases.append(self.add_weight(
                name=f"gate_bias_{i}", shape=(dim,),
                initializer=self.gate_bias_initializer))
        self.built = True

    def call(self, x):
        for i in range(self.num_layers):
            transform = self._activation(
                ops.matmul(x, self.transform_kernels[i])
                + self.transform_biases[i])
            gate = ops.sigmoid(ops.matmul(x, self.gate_kernels[i])
                               + self.gate_biases[i])
            x = gate * transform + (1.0 - gate) * x
        return x

    def compute_output_shape(self, input_shape):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_layers": self.num_layers, "activation": self.activation,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
            "gate_bias_initializer": keras.initializers.serialize(
                self.gate_bias_initializer)})
        return config
