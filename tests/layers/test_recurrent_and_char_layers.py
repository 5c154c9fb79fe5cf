"""ELMo's building blocks against reference math in NumPy: the projected
LSTM (both directions, padding, clipping, carried state), the character
CNN, highway layers and the scalar mix."""

import keras
import numpy as np
import pytest

from hf_copy import assert_close
from kzoo.layers import CharacterCNN, Highway, ProjectedLSTM, ScalarMix


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def lstm_reference(x, mask, kernel, recurrent, bias, projection, cell_clip,
                   projection_clip, backwards=False, h0=None, c0=None):
    """A step-by-step LSTMP in float64: padded steps keep the state."""
    batch, time, _ = x.shape
    units = recurrent.shape[1] // 4
    width = projection.shape[1] if projection is not None else units
    h = np.zeros((batch, width)) if h0 is None else h0.astype("float64")
    c = np.zeros((batch, units)) if c0 is None else c0.astype("float64")
    outputs = np.zeros((batch, time, width))
    steps = range(time - 1, -1, -1) if backwards else range(time)
    for t in steps:
        z = x[:, t] @ kernel + h @ recurrent + bias
        i, f, g, o = np.split(z, 4, axis=-1)
        c_new = sigmoid(f) * c + sigmoid(i) * np.tanh(g)
        if cell_clip is not None:
            c_new = np.clip(c_new, -cell_clip, cell_clip)
        h_new = sigmoid(o) * np.tanh(c_new)
        if projection is not None:
            h_new = h_new @ projection
            if projection_clip is not None:
                h_new = np.clip(h_new, -projection_clip, projection_clip)
        real = mask[:, t:t + 1].astype(bool)
        h = np.where(real, h_new, h)
        c = np.where(real, c_new, c)
        outputs[:, t] = np.where(real, h_new, 0.0)
    return outputs, h, c


def random_lstm(rng, inputs=6, units=7, projection=5, **kwargs):
    layer = ProjectedLSTM(units, projection_dim=projection, **kwargs)
    layer.build((None, None, inputs))
    for weight in layer.trainable_weights:
        weight.assign(rng.normal(0, 0.6, weight.shape).astype("float32"))
    return layer


def weights_of(layer):
    def np_(w):
        return None if w is None else keras.ops.convert_to_numpy(w)
    return (np_(layer.kernel), np_(layer.recurrent_kernel), np_(layer.bias),
            np_(layer.projection_kernel))


@pytest.mark.parametrize("backwards", [False, True])
def test_projected_lstm_matches_numpy_with_padding_and_clipping(backwards):
    rng = np.random.default_rng(0)
    layer = random_lstm(rng, cell_clip=0.8, projection_clip=0.3,
                        go_backwards=backwards)
    x = rng.normal(0, 1, (3, 6, 6)).astype("float32")
    mask = np.ones((3, 6), "int32")
    mask[1, 4:] = 0
    mask[2, 1:] = 0
    outputs, (h, c) = layer(x, mask=mask)
    expected, h_ref, c_ref = lstm_reference(
        x, mask, *weights_of(layer), 0.8, 0.3, backwards=backwards)
    assert_close(outputs, expected, atol=1e-5)
    assert_close(h, h_ref, atol=1e-5)
    assert_close(c, c_ref, atol=1e-5)
    # The clips bite (the check would pass vacuously otherwise).
    assert np.abs(keras.ops.convert_to_numpy(outputs)).max() == \
        pytest.approx(0.3)


@pytest.mark.parametrize("backwards", [False, True])
def test_a_padded_row_gets_what_it_gets_alone(backwards):
    rng = np.random.default_rng(1)
    layer = random_lstm(rng, go_backwards=backwards)
    x = rng.normal(0, 1, (2, 7, 6)).astype("float32")
    mask = np.ones((2, 7), "int32")
    mask[0, 3:] = 0
    padded, _ = layer(x, mask=mask)
    alone, _ = layer(x[:1, :3])
    assert_close(keras.ops.convert_to_numpy(padded)[0, :3],
                 keras.ops.convert_to_numpy(alone)[0], atol=1e-6)
    assert np.all(keras.ops.convert_to_numpy(padded)[0, 3:] == 0.0)


def test_without_projection_it_is_keras_lstm():
    # Same gate order (i, f, g, o) and math as keras.layers.LSTM.
    rng = np.random.default_rng(2)
    layer = random_lstm(rng, projection=None)
    x = rng.normal(0, 1, (2, 5, 6)).astype("float32")
    reference = keras.layers.LSTM(7, return_sequences=True)
    reference.build(x.shape)
    reference.set_weights([keras.ops.convert_to_numpy(w) for w in
                           (layer.kernel, layer.recurrent_kernel, layer.bias)])
    outputs, _ = layer(x)
    assert_close(outputs, reference(x), atol=1e-5)


def test_initial_state_and_stateful_carry():
    rng = np.random.default_rng(3)
    stateful = random_lstm(rng, stateful=True, batch_size=2)
    x = rng.normal(0, 1, (2, 4, 6)).astype("float32")
    mask = np.array([[1, 1, 1, 1], [1, 1, 0, 0]], "int32")
    first, (h1, c1) = stateful(x, mask=mask)
    second, _ = stateful(x, mask=mask)  # starts from the carried state
    expected, _, _ = lstm_reference(
        x, mask, *weights_of(stateful), None, None,
        h0=keras.ops.convert_to_numpy(h1), c0=keras.ops.convert_to_numpy(c1))
    assert_close(second, expected, atol=1e-5)
    stateful.reset_states()
    again, _ = stateful(x, mask=mask)
    assert_close(again, first, atol=0.0)
    with pytest.raises(ValueError, match="needs batch_size"):
        ProjectedLSTM(4, stateful=True)


def test_forget_bias_starts_at_one():
    layer = ProjectedLSTM(3)
    layer.build((None, None, 2))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(layer.bias),
                                  [0, 0, 0, 1, 1, 1, 0, 0, 0, 0, 0, 0])


def test_character_cnn_matches_numpy():
    rng = np.random.default_rng(4)
    cnn = CharacterCNN(20, 3, filters=[[1, 2], [3, 4]], activation="tanh")
    ids = rng.integers(0, 20, (2, 3, 6)).astype("int32")
    out = keras.ops.convert_to_numpy(cnn(ids))
    table = keras.ops.convert_to_numpy(cnn.embeddings)
    x = table[ids]  # (2, 3, 6, 3)
    expected = []
    for kernel, bias, (width, _) in zip(cnn.kernels, cnn.biases, cnn.filters):
        kernel = keras.ops.convert_to_numpy(kernel)
        windows = np.stack([x[:, :, p:p + width] for p in
                            range(6 - width + 1)], 2)  # (2,3,P,w,3)
        conv = np.einsum("btpwe,wen->btpn", windows, kernel)
        expected.append(np.tanh(conv.max(2) + keras.ops.convert_to_numpy(
            bias)))
    assert out.shape == (2, 3, 6)
    assert_close(out, np.concatenate(expected, -1), atol=1e-5)


def test_highway_gate_multiplies_the_transform():
    rng = np.random.default_rng(5)
    highway = Highway(2)
    x = rng.normal(0, 1, (4, 5)).astype("float32")
    highway.build(x.shape)
    for weight in highway.weights:
        weight.assign(rng.normal(0, 0.5, weight.shape).astype("float32"))
    expected = x.astype("float64")
    for i in range(2):
        def w(v):
            return keras.ops.convert_to_numpy(v[i])
        transform = np.maximum(expected @ w(highway.transform_kernels)
                               + w(highway.transform_biases), 0)
        gate = sigmoid(expected @ w(highway.gate_kernels)
                       + w(highway.gate_biases))
        expected = gate * transform + (1 - gate) * expected
    assert_close(highway(x), expected, atol=1e-5)


def test_scalar_mix_matches_numpy_with_layer_normalisation():
    rng = np.random.default_rng(6)
    layers = rng.normal(2, 3, (2, 3, 4, 5)).astype("float32")
    mask = np.array([[1, 1, 1, 0], [1, 1, 0, 0]], "int32")
    mix = ScalarMix(3, normalize_layers=True)
    mix.build(layers.shape)
    mix.layer_weights.assign(np.array([0.1, -0.4, 0.7], "float32"))
    mix.gamma.assign(1.5)
    weights = np.exp([0.1, -0.4, 0.7]) / np.exp([0.1, -0.4, 0.7]).sum()
    real = mask.astype(bool)
    expected = 0.0
    for j in range(3):
        values = layers[:, j][real]  # (real tokens, dim)
        normed = (layers[:, j] - values.mean()) / np.sqrt(values.var()
                                                          + 1e-12)
        expected = expected + weights[j] * normed
    out = keras.ops.convert_to_numpy(mix(layers, mask))
    assert_close(out[real], 1.5 * expected[real], atol=1e-5)
    plain = ScalarMix(3)
    assert_close(plain(layers), layers.mean(1), atol=1e-5)  # even at first
