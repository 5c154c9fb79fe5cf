"""MobileBertBackbone: the shared backbone contract, its argument
checks (before anything is built), the trigram input and the megatron
layout of its blocks."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import check_backbone, random_bert_inputs
from kzoo.core.arguments import ArgumentError
from kzoo.distribution.layouts import expected_axes, unmatched_rules
from kzoo.models.mobilebert.layers import trigram_windows

VOCAB = 97
TINY = dict(vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=32,
            intermediate_dim=24, embedding_dim=8, bottleneck_dim=16,
            num_feedforward_networks=3, max_sequence_length=64)


def test_backbone_contract(tmp_path):
    backbone = kzoo.MobileBertBackbone(**TINY)
    check_backbone(backbone, random_bert_inputs(vocabulary_size=VOCAB),
                   tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 12, 32),
                                    "pooled_output": (4, 32)})


def test_trigram_windows_hold_next_own_and_previous_vectors():
    x = np.arange(1, 7, dtype="float32").reshape(1, 3, 2)
    windows = keras.ops.convert_to_numpy(trigram_windows(x))
    np.testing.assert_array_equal(windows[0], [
        [3, 4, 1, 2, 0, 0],
        [5, 6, 3, 4, 1, 2],
        [0, 0, 5, 6, 3, 4]])


@pytest.mark.parametrize("overrides,message", [
    (dict(embedding_dim=32), "embedding_dim \\(32\\) must be smaller"),
    (dict(bottleneck_dim=15), "bottleneck_dim \\(15\\) must be divisible"),
    (dict(pooler_dense="yes"), "pooler_dense must be True or False"),
])
def test_bad_arguments_are_named(overrides, message):
    with pytest.raises(ArgumentError, match=message):
        kzoo.MobileBertBackbone(**{**TINY, **overrides})


def test_layout_map_shards_attention_and_feed_forward_networks():
    backbone = kzoo.MobileBertBackbone(**{**TINY, "num_heads": 4})
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), [f"cpu:{i}" for i in range(8)])
    layout_map = kzoo.MobileBertBackbone.get_layout_map(mesh)
    rank = {w.path: len(w.shape) for w in backbone.weights}
    assert unmatched_rules(layout_map, backbone.weights) == []
    for path, axes in {
            "token_embedding/embeddings": (None, "model"),
            "mobilebert_layer_0/attention/value/kernel": (None, "model"),
            "mobilebert_layer_1/feed_forward_2/output_dense/kernel":
                ("model", None),
            "mobilebert_layer_0/input_bottleneck/kernel": (None, None),
            "embedding_projection/kernel": (None, None)}.items():
        assert expected_axes(layout_map, path, rank[path]) == axes, path
