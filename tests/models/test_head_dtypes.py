"""Every task's head computes in its backbone's dtype policy: a backbone
made with `dtype="mixed_bfloat16"` (while the global policy stays
float32, as `from_preset(..., dtype=...)` leaves it) gets heads whose
every layer, down to the sublayers a head builds itself, is
mixed_bfloat16 too. A sublayer made without the policy falls back to the
global one and silently computes in float32."""

import keras
import pytest

from kzoo.core.head_weights import head_layers
from kzoo.core.task import Task
from text_testing import make_task, params, task_backbone_cls, tiny_backbone

pytestmark = pytest.mark.once   # which policy a layer has: no numerics

POLICY = "mixed_bfloat16"
# Layers kept in float32 on purpose, with the reason.
FLOAT32_BY_DESIGN = {
    # a bfloat16 softmax would distort the generator's token probabilities
    "replacement_sampler",
}


def _all_layers(layer):
    # Keras lists sublayers only through this private method (a test may
    # read it; kzoo's code does not).
    return layer._flatten_layers(include_self=True, recursive=True)


@pytest.mark.parametrize("task_cls", params(Task))
def test_heads_take_the_backbones_dtype_policy(task_cls):
    assert keras.config.dtype_policy().name == "float32"
    backbone = tiny_backbone(task_backbone_cls(task_cls))
    backbone = type(backbone).from_config(
        {**backbone.get_config(), "dtype": POLICY})
    task = make_task(task_cls, backbone=backbone)
    wrong = sorted({f"{head.name}/{layer.name}: {layer.dtype_policy.name}"
                    for head in head_layers(task)
                    for layer in _all_layers(head)
                    if layer.dtype_policy.name != POLICY
                    # A float32 output cast is the one layer meant to differ.
                    and not layer.name.endswith("_float32")
                    and layer.name not in FLOAT32_BY_DESIGN})
    assert not wrong, wrong


@pytest.mark.parametrize("length", [299, 257])
def test_pooling_counts_past_256_real_tokens_in_bfloat16(length):
    # bfloat16 holds integers exactly only up to 256 (then every second
    # one): a count of 299 or 257 real tokens kept in the compute dtype
    # becomes 300 or 256, and ULMFiT's "last real token" lands on padding
    # or one token early.
    import numpy as np
    from kzoo.layers.pooling import TokenPooling
    from kzoo.models.awd_lstm.text_classifier import ConcatPooling
    seq = 320
    values = np.zeros((1, seq, 2), "float32")
    values[0, length - 1, 0] = 1.0          # marks the last real token
    values[0, :, 1] = np.arange(seq) / seq  # a ramp to average
    mask = (np.arange(seq) < length)[None].astype("int32")
    pooled = keras.ops.convert_to_numpy(keras.ops.cast(ConcatPooling(
        dtype=POLICY)(keras.ops.convert_to_tensor(values),
                      keras.ops.convert_to_tensor(mask)), "float32"))[0]
    assert pooled[0] == 1.0   # [last (2), max (2), mean (2)]
    expected = values[0, :length, 1].mean()
    token_mean = keras.ops.convert_to_numpy(keras.ops.cast(
        TokenPooling("mean", dtype=POLICY)(
            keras.ops.convert_to_tensor(values),
            keras.ops.convert_to_tensor(mask)), "float32"))[0, 1]
    # One bfloat16 rounding of the result: 2^-8 relative.
    for mean in (pooled[5], token_mean):
        assert abs(mean - expected) <= 2 ** -8 * expected
