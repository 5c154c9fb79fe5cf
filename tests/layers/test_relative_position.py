"""T5's relative position buckets and bias against transformers'
`T5Attention._relative_position_bucket` and `T5Attention.compute_bias`."""

import keras
import numpy as np
import pytest

from hf_copy import assert_close, quiet_transformers
from kzoo.layers import RelativePositionBias, relative_position_bucket

# Parity with `transformers`' layers runs in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs, task for task, through these layers.
pytestmark = pytest.mark.once

# (num_buckets, max_distance): T5's default, a small one, an odd one.
SETTINGS = [(32, 128), (8, 16), (10, 20)]


@pytest.mark.parametrize("bidirectional", [True, False])
@pytest.mark.parametrize("num_buckets,max_distance", SETTINGS)
def test_buckets_match_t5(bidirectional, num_buckets, max_distance):
    quiet_transformers()
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention
    relative = np.arange(-1200, 1201, dtype="int64")  # every distance used
    expected = T5Attention._relative_position_bucket(
        torch.tensor(relative), bidirectional=bidirectional,
        num_buckets=num_buckets, max_distance=max_distance).numpy()
    buckets = relative_position_bucket(
        relative.astype("int32"), bidirectional, num_buckets, max_distance)
    buckets = np.asarray(keras.ops.convert_to_numpy(buckets))
    np.testing.assert_array_equal(buckets, expected)
    assert buckets.min() >= 0 and buckets.max() < num_buckets


def t5_attention(is_decoder, num_buckets, max_distance, heads=3, seed=0):
    transformers = quiet_transformers()
    import torch
    from transformers.models.t5.modeling_t5 import T5Attention
    config = transformers.T5Config(
        d_model=16, d_kv=4, num_heads=heads, is_decoder=is_decoder,
        relative_attention_num_buckets=num_buckets,
        relative_attention_max_distance=max_distance)
    torch.manual_seed(seed)
    attention = T5Attention(config, has_relative_attention_bias=True,
                            layer_idx=0)
    with torch.no_grad():
        attention.relative_attention_bias.weight.normal_()
    return attention.eval()


@pytest.mark.parametrize("is_decoder", [False, True])
def test_bias_matches_t5_compute_bias(is_decoder):
    t5 = t5_attention(is_decoder, 8, 16)
    layer = RelativePositionBias(3, num_buckets=8, max_distance=16,
                                 bidirectional=not is_decoder)
    layer.build()
    layer.embeddings.assign(
        t5.relative_attention_bias.weight.detach().numpy())
    states = np.zeros((2, 11, 16), "float32")
    bias = layer(states)  # (1, heads, 11, 11)
    assert tuple(bias.shape) == (1, 3, 11, 11)
    assert_close(bias, t5.compute_bias(11, 11))
    # Decoding with a cache: one query at position 6, keys 0 .. 19.
    step = layer(states[:, :1], key_length=20, start_index=6)
    assert_close(step, t5.compute_bias(1, 20, past_seen_tokens=6))
    # The step's row is the row of the full (20 x 20) bias.
    assert_close(step, keras.ops.convert_to_numpy(
        layer(np.zeros((1, 20, 16), "float32")))[:, :, 6:7])


def test_functional_wiring_and_config():
    inputs = keras.Input((None, 8))
    layer = RelativePositionBias(2, num_buckets=6, max_distance=10,
                                 bidirectional=False, name="bias")
    model = keras.Model(inputs, layer(inputs))
    out = model(np.zeros((1, 5, 8), "float32"))
    assert tuple(out.shape) == (1, 2, 5, 5)
    # Causal buckets: every later key (upper triangle) is bucket 0.
    out = np.asarray(keras.ops.convert_to_numpy(out))
    table = np.asarray(keras.ops.convert_to_numpy(layer.embeddings))
    np.testing.assert_allclose(out[0, :, 0, 1:], table[0][:, None]
                               * np.ones((1, 4)), atol=0)
    again = RelativePositionBias.from_config(layer.get_config())
    assert (again.num_buckets, again.max_distance, again.bidirectional) == (
        6, 10, False)
