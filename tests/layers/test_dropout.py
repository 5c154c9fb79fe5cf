"""kzoo.layers.Dropout is keras.layers.Dropout's function with its own mask
draw on torch: the share dropped is the rate, the kept values are scaled
by 1 / (1 - rate) exactly, the same seed gives the same mask, inference
and rate 0 pass the input through, noise_shape shares a mask along an
axis, and the layer survives a save and load."""

import keras
import numpy as np
import pytest

from kzoo.layers import Dropout

ONES = np.ones((1000, 1000), "float32")


@pytest.mark.parametrize("rate", [0.1, 0.5])
def test_drops_the_rate_and_scales_the_rest(rate):
    out = keras.ops.convert_to_numpy(
        Dropout(rate, seed=3)(ONES, training=True))
    kept = out[out != 0]
    np.testing.assert_array_equal(kept, np.float32(1 / (1 - rate)))
    # 10^6 draws: sd of the share sqrt(rate (1 - rate) / 10^6) = 3.0e-4 at
    # 0.1 (measured over 8 seeds on each backend: 3.6e-4, 3.7e-4, 2.6e-4);
    # the bound is 5 of them.
    bound = 5 * np.sqrt(rate * (1 - rate) / ONES.size)
    assert abs(float(np.mean(out == 0)) - rate) < bound


def _dropped(seed):
    return keras.ops.convert_to_numpy(
        Dropout(0.1, seed=seed)(ONES, training=True))


def test_same_seed_same_mask_and_training_off_is_identity():
    first, again, other = _dropped(7), _dropped(7), _dropped(8)
    np.testing.assert_array_equal(first, again)
    assert np.any(first != other)
    layer = Dropout(0.1, seed=7)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(layer(ONES, training=False)), ONES)
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(Dropout(0.0)(ONES, training=True)), ONES)


def test_noise_shape_shares_the_mask_along_an_axis():
    x = np.ones((4, 50, 16), "float32")
    out = keras.ops.convert_to_numpy(
        Dropout(0.5, noise_shape=(None, 1, None), seed=0)(x, training=True))
    assert np.all(out == out[:, :1, :])
    assert 0 < np.mean(out == 0) < 1


def test_survives_save_and_load(tmp_path):
    inputs = keras.Input((8,))
    model = keras.Model(inputs, Dropout(0.25, seed=1, name="drop")(inputs))
    model.save(tmp_path / "model.keras")
    loaded = keras.saving.load_model(tmp_path / "model.keras")
    layer = loaded.get_layer("drop")
    assert type(layer) is Dropout and layer.rate == 0.25
