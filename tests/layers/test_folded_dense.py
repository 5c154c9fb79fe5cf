"""FoldedDense and folded_matmul: the same function as `keras.layers.Dense`
and `ops.matmul` (the rank-2 view is an implementation detail), on every
input rank, inside a functional model with unknown batch and sequence
sizes, in gradients, and with Dense's LoRA still applied."""

import keras
import numpy as np
import pytest
from keras import ops

from kzoo.layers.dense import FoldedDense, folded_matmul

RNG = np.random.default_rng(0)


def twin_layers(units=5, **kwargs):
    """A Dense and a FoldedDense with the same weights."""
    plain = keras.layers.Dense(units, **kwargs)
    folded = FoldedDense(units, **kwargs)
    plain.build((None, 7))
    folded.build((None, 7))
    folded.set_weights(plain.get_weights())
    return plain, folded


@pytest.mark.parametrize("shape", [(3, 7), (2, 4, 7), (2, 3, 4, 7)])
def test_same_outputs_as_dense_at_every_rank(shape):
    plain, folded = twin_layers(activation="gelu")
    x = RNG.normal(size=shape).astype("float32")
    expected = ops.convert_to_numpy(plain(x))
    actual = ops.convert_to_numpy(folded(x))
    assert actual.shape == shape[:-1] + (5,)
    np.testing.assert_allclose(actual, expected, atol=1e-6)


def test_same_weights_and_names_as_dense():
    plain, folded = twin_layers(name="output_dense")
    assert [w.path for w in folded.weights] == [
        "output_dense/kernel", "output_dense/bias"]
    assert [w.shape for w in folded.weights] == [w.shape for w in plain.weights]


def test_functional_model_with_unknown_batch_and_length():
    inputs = keras.Input((None, 7))
    folded = FoldedDense(5)
    model = keras.Model(inputs, folded(inputs))
    assert model.output.shape == (None, None, 5)
    for batch, length in ((1, 3), (4, 9)):
        x = RNG.normal(size=(batch, length, 7)).astype("float32")
        kernel, bias = (ops.convert_to_numpy(w) for w in folded.weights)
        np.testing.assert_allclose(ops.convert_to_numpy(model.predict(
            x, verbose=0)), x @ kernel + bias, atol=1e-5)


def test_training_gives_the_same_weights_as_dense():
    # The gradient is the reason the layer exists: one fit step from the
    # same weights must move both layers identically.
    x = RNG.normal(size=(4, 6, 7)).astype("float32")
    y = RNG.normal(size=(4, 6, 5)).astype("float32")
    plain, folded = twin_layers()
    trained = []
    for layer in (plain, folded):
        inputs = keras.Input((6, 7))
        model = keras.Model(inputs, layer(inputs))
        model.compile(optimizer=keras.optimizers.SGD(0.1), loss="mse")
        model.fit(x, y, epochs=2, batch_size=4, verbose=0)
        trained.append([ops.convert_to_numpy(w) for w in layer.weights])
    for a, b in zip(*trained):
        np.testing.assert_allclose(a, b, atol=1e-6)


def test_lora_still_applies():
    plain, folded = twin_layers()
    folded.enable_lora(rank=2)
    folded.lora_kernel_b.assign(np.ones((2, 5), "float32"))
    x = RNG.normal(size=(2, 3, 7)).astype("float32")
    delta = ops.convert_to_numpy(folded(x)) - ops.convert_to_numpy(plain(x))
    assert np.abs(delta).max() > 1e-3


@pytest.mark.parametrize("shape", [(3, 7), (2, 4, 7)])
def test_folded_matmul_equals_matmul(shape):
    x = RNG.normal(size=shape).astype("float32")
    kernel = RNG.normal(size=(7, 11)).astype("float32")
    np.testing.assert_allclose(
        ops.convert_to_numpy(folded_matmul(x, kernel)), x @ kernel,
        rtol=1e-5, atol=1e-5)
