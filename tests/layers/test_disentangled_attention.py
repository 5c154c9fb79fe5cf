"""DeBERTa's disentangled attention against the reference math: the log
buckets against transformers' `make_log_bucket_position` for every
distance, and the layer against a plain NumPy transcription of the
paper's three terms, one (query, key) pair at a time."""

import math

import keras
import numpy as np
import pytest

from hf_copy import quiet_transformers
from kzoo.layers.disentangled_attention import (
    DisentangledSelfAttention, log_bucket_position, relative_position_index)

# Parity with `transformers`' layers runs in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs, task for task, through these layers.
pytestmark = pytest.mark.once

# (position_buckets, max_relative_positions): v3's, small ones.
SETTINGS = [(256, 512), (8, 16), (6, 40)]


@pytest.mark.parametrize("buckets,max_position", SETTINGS)
def test_log_buckets_match_transformers(buckets, max_position):
    quiet_transformers()
    import torch
    from transformers.models.deberta_v2.modeling_deberta_v2 import (
        make_log_bucket_position)
    relative = np.arange(-1500, 1501, dtype="int64")
    expected = make_log_bucket_position(torch.tensor(relative), buckets,
                                        max_position).numpy()
    got = keras.ops.convert_to_numpy(log_bucket_position(
        relative.astype("int32"), buckets, max_position))
    np.testing.assert_array_equal(got, expected)


def test_relative_index_is_query_minus_key():
    index = keras.ops.convert_to_numpy(relative_position_index(3, 4, 0, 0))
    np.testing.assert_array_equal(index, [[0, -1, -2, -3], [1, 0, -1, -2],
                                          [2, 1, 0, -1]])


def _bucket(distance, buckets, max_position):
    """The paper's bucket of one relative distance, in Python floats."""
    mid = buckets // 2
    if abs(distance) < mid:
        return distance
    log_position = math.ceil(math.log(abs(distance) / mid)
                             / math.log((max_position - 1) / mid)
                             * (mid - 1)) + mid
    return int(math.copysign(log_position, distance)) \
        if abs(distance) > mid else distance


def reference_attention(layer, x, table, mask):
    """Loops over heads, queries and keys: c2c + c2p + p2c, scaled by
    sqrt(head_dim * 3), masked softmax, output projection."""
    w = {name: [keras.ops.convert_to_numpy(v) for v in dense.weights]
         for name, dense in (("q", layer.query_dense), ("k", layer.key_dense),
                             ("v", layer.value_dense),
                             ("o", layer.output_dense))}
    if not layer.share_att_key:
        w["pk"] = [keras.ops.convert_to_numpy(v)
                   for v in layer.pos_key_dense.weights]
        w["pq"] = [keras.ops.convert_to_numpy(v)
                   for v in layer.pos_query_dense.weights]
    else:
        w["pk"], w["pq"] = w["k"], w["q"]
    proj = lambda a, name: a @ w[name][0] + w[name][1]  # noqa: E731
    h, d = layer.num_heads, layer.head_dim
    span = layer.attention_span
    batch, seq, _ = x.shape
    q, k, v = (proj(x, n).reshape(batch, seq, h, d) for n in "qkv")
    pk = proj(table, "pk").reshape(2 * span, h, d)
    pq = proj(table, "pq").reshape(2 * span, h, d)
    scale = math.sqrt(d * 3)
    out = np.zeros((batch, seq, h, d))
    for b in range(batch):
        for head in range(h):
            logits = np.zeros((seq, seq))
            for i in range(seq):
                for j in range(seq):
                    r = _bucket(i - j, layer.position_buckets,
                                layer.max_relative_positions)
                    c2p_row = min(max(r + span, 0), 2 * span - 1)
                    # p2c uses delta(j, i) = -(i - j) for key j, negated.
                    p2c_row = min(max(-_bucket(j - i, layer.position_buckets,
                                                layer.max_relative_positions)
                                      + span, 0), 2 * span - 1)
                    logits[i, j] = (q[b, i, head] @ k[b, j, head]
                                    + q[b, i, head] @ pk[c2p_row, head]
                                    + k[b, j, head] @ pq[p2c_row, head]
                                    ) / scale
                    if not mask[b, i, j]:
                        logits[i, j] = -1e9
            probs = np.exp(logits - logits.max(-1, keepdims=True))
            probs /= probs.sum(-1, keepdims=True)
            out[b, :, head] = probs @ v[b, :, head]
    return proj(out.reshape(batch, seq, h * d), "o")


@pytest.mark.parametrize("share_att_key", [True, False])
def test_layer_matches_reference_math(share_att_key):
    # Buckets of 8 reaching 16 and 21 tokens: exact, log-bucketed and
    # clipped distances all occur.
    keras.utils.set_random_seed(0)
    layer = DisentangledSelfAttention(
        num_heads=3, head_dim=5, position_buckets=8,
        max_relative_positions=16, share_att_key=share_att_key,
        kernel_initializer=keras.initializers.RandomNormal(stddev=0.3))
    rng = np.random.default_rng(0)
    x = rng.normal(size=(2, 21, 13)).astype("float32")
    table = rng.normal(size=(16, 13)).astype("float32")
    padding = np.ones((2, 21), bool)
    padding[1, 15:] = False
    mask = padding[:, :, None] & padding[:, None, :]
    got = keras.ops.convert_to_numpy(layer(x, table, attention_mask=mask))
    expected = reference_attention(layer, x.astype("float64"),
                                   table.astype("float64"), mask)
    np.testing.assert_allclose(got, expected, atol=2e-5)
    if not share_att_key:
        assert {w.path.split("/")[-2] for w in layer.weights} >= {
            "pos_key", "pos_query"}


def test_bad_position_terms_are_named():
    with pytest.raises(ValueError, match="pos_att_type must be a subset"):
        DisentangledSelfAttention(2, 4, pos_att_type=("p2p",))
