"""RMSNorm against NumPy and transformers' T5LayerNorm."""

import keras
import numpy as np
import pytest

from hf_copy import assert_close, to_torch, quiet_transformers
from kzoo.layers import RMSNorm, normalization_layer

# Parity with `transformers`' layers runs in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs, task for task, through these layers.
pytestmark = pytest.mark.once


def rms_norm_reference(x, scale, epsilon):
    x = x.astype("float64")
    variance = np.mean(x ** 2, axis=-1, keepdims=True)
    return x / np.sqrt(variance + epsilon) * scale


def test_rms_norm_matches_numpy():
    rng = np.random.default_rng(0)
    x = rng.normal(0, 3, (2, 5, 16)).astype("float32")
    scale = rng.normal(1, 0.2, 16).astype("float32")
    norm = RMSNorm(epsilon=1e-3, name="rms_norm")
    norm.build(x.shape)
    norm.scale.assign(scale)
    assert [w.path for w in norm.weights] == ["rms_norm/scale"]  # no bias
    assert_close(norm(x), rms_norm_reference(x, scale, 1e-3))


def test_rms_norm_matches_t5_layer_norm():
    quiet_transformers()
    import torch
    from transformers.models.t5.modeling_t5 import T5LayerNorm
    rng = np.random.default_rng(1)
    x = rng.normal(0, 2, (3, 7, 24)).astype("float32")
    t5_norm = T5LayerNorm(24, eps=1e-6)
    with torch.no_grad():
        t5_norm.weight.copy_(torch.tensor(rng.normal(1, 0.3, 24)))
    norm = RMSNorm(epsilon=1e-6)
    norm.build(x.shape)
    norm.scale.assign(t5_norm.weight.detach().numpy())
    assert_close(norm(x), t5_norm(to_torch(x)))


def test_rms_norm_float16_variance_in_float32():
    # Squares of 1e3 overflow float16 (max 65504); the mean of squares is
    # taken in float32, so the result is finite and right.
    x = np.full((1, 2, 8), 1000.0, "float32")
    norm = RMSNorm(dtype="mixed_float16")
    y = norm(x.astype("float16"))
    assert keras.backend.standardize_dtype(y.dtype) == "float16"
    np.testing.assert_allclose(
        np.asarray(keras.ops.convert_to_numpy(y), "float32"), 1.0, atol=1e-3)


def test_config_round_trip_and_choice():
    norm = RMSNorm(epsilon=1e-5, name="n")
    again = RMSNorm.from_config(norm.get_config())
    assert again.epsilon == 1e-5
    assert isinstance(normalization_layer("rms_norm", 1e-6), RMSNorm)
    assert isinstance(normalization_layer("layer_norm", 1e-6),
                      keras.layers.LayerNormalization)
    with pytest.raises(ValueError, match="Unknown normalization 'rms'"):
        normalization_layer("rms", 1e-6)
