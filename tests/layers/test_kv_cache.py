"""kv_cache.write: the step's keys/values land at their positions, and the
rest of the cache is untouched; in place only inside writes_in_place()
(on torch, for the generation graphs), a copy everywhere else."""

import keras
import numpy as np
import pytest

from kzoo.layers import kv_cache


def _cache_and_update(length):
    rng = np.random.default_rng(0)
    cache = rng.normal(size=(2, 2, 7, 3, 4)).astype("float32")
    update = rng.normal(size=(2, 2, length, 3, 4)).astype("float32")
    return cache, update


def _expected(cache, update, index):
    expected = cache.copy()
    expected[:, :, index:index + update.shape[2]] = update
    return expected


@pytest.mark.parametrize("length, index", [(1, 0), (1, 6), (3, 2)])
def test_write_is_a_copy_by_default(length, index):
    cache, update = _cache_and_update(length)
    tensor = keras.ops.convert_to_tensor(cache)
    written = kv_cache.write(tensor, keras.ops.convert_to_tensor(update),
                             keras.ops.convert_to_tensor(index, "int32"))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(written),
                                  _expected(cache, update, index))
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(tensor), cache)


@pytest.mark.parametrize("index", [4, "tensor"])
def test_write_in_place_on_torch_only(index):
    cache, update = _cache_and_update(2)
    at = 4 if index == 4 else keras.ops.convert_to_tensor(4, "int32")
    tensor = keras.ops.convert_to_tensor(cache)
    with kv_cache.writes_in_place():
        written = kv_cache.write(tensor, keras.ops.convert_to_tensor(update),
                                 at)
    expected = _expected(cache, update, 4)
    np.testing.assert_array_equal(keras.ops.convert_to_numpy(written),
                                  expected)
    if keras.backend.backend() == "torch":
        assert written is tensor  # no copy of the cache
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(tensor),
                                      expected)
    else:  # XLA updates in place on its own; the API stays functional
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(tensor),
                                      cache)
    # Outside the block, copies again.
    again = kv_cache.write(tensor, keras.ops.convert_to_tensor(update), 0)
    assert again is not tensor
