"""ElectraBackbone: the shared backbone contract, the factorised
embeddings (projection only when the widths differ), no pooler, the
parameter count of the original's formula, layer groups and layouts."""

import keras
import numpy as np
import pytest

import kzoo
from electra_testing import make_tiny_electra
from helpers import check_backbone, random_bert_inputs
from kzoo.distribution.layouts import expected_axes, unmatched_rules
from kzoo.core.arguments import ArgumentError

VOCAB = 97


def hf_parameter_count(v, e, h, i, layers, positions=64, types=2):
    """transformers' ElectraModel: embeddings at e (word, position, token
    type, LayerNorm), embeddings_project when e != h, BERT's blocks, no
    pooler."""
    embeddings = (v + positions + types) * e + 2 * e
    project = e * h + h if e != h else 0
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embeddings + project + layers * block


@pytest.fixture
def backbone():
    return make_tiny_electra(vocabulary_size=VOCAB)


def test_backbone_contract(backbone, tmp_path):
    check_backbone(backbone, random_bert_inputs(vocabulary_size=VOCAB),
                   tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 12, 32)})


@pytest.mark.parametrize("embedding_size", [24, 32, None])
def test_parameter_count_matches_the_original(embedding_size):
    backbone = make_tiny_electra(vocabulary_size=VOCAB,
                                 embedding_size=embedding_size)
    e = embedding_size or 32
    assert backbone.embedding_width == e
    assert backbone.count_params() == hf_parameter_count(VOCAB, e, 32, 64, 2)
    names = [layer.name for layer in backbone.layers]
    assert ("embeddings_project" in names) == (e != 32)
    assert "pooler" not in names
    assert backbone.token_embedding.embeddings.shape == (VOCAB, e)


def test_layer_groups_put_the_projection_with_the_embeddings(backbone):
    groups = backbone.layer_groups()
    assert groups[0] == ["token_embedding", "position_embedding",
                         "segment_embedding", "embeddings_layer_norm",
                         "embeddings_project"]
    assert groups[1:] == [["transformer_layer_0"], ["transformer_layer_1"]]


def test_layout_map_shards_blocks_and_keeps_the_projection_whole():
    backbone = make_tiny_electra(vocabulary_size=VOCAB, num_heads=4,
                                 embedding_size=16)
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), [f"cpu:{i}" for i in range(8)])
    layout_map = kzoo.ElectraBackbone.get_layout_map(mesh)
    rank = {w.path: len(w.shape) for w in backbone.weights}
    assert unmatched_rules(layout_map, backbone.weights) == []
    for path, axes in {
            "token_embedding/embeddings": (None, "model"),
            "embeddings_project/kernel": (None, None),
            "segment_embedding/embeddings": (None, None),
            "transformer_layer_0/attention/query/kernel": (None, "model"),
            "transformer_layer_1/output_dense/kernel": ("model", None)}.items():
        assert expected_axes(layout_map, path, rank[path]) == axes, path


def test_segments_change_the_output(backbone):
    inputs = random_bert_inputs(vocabulary_size=VOCAB)
    a = keras.ops.convert_to_numpy(
        backbone(inputs, training=False)["sequence_output"])
    flipped = {**inputs, "segment_ids": 1 - inputs["segment_ids"]}
    b = keras.ops.convert_to_numpy(
        backbone(flipped, training=False)["sequence_output"])
    assert not np.allclose(a, b)
    with pytest.raises(ValueError, match=r"segment_ids holds 2, outside "
                                         r"\[0, 1\]"):
        backbone({**inputs, "segment_ids": inputs["segment_ids"] * 2})


def test_bad_embedding_size_is_named():
    with pytest.raises(ArgumentError, match="embedding_size"):
        make_tiny_electra(embedding_size=0)
