"""AlbertBackbone: the shared backbone contract plus ALBERT's factorised
embedding and cross-layer sharing."""

import keras
import numpy as np
import pytest

import kzoo
from albert_testing import GROUPED, make_tiny_albert
from helpers import check_backbone, to_numpy
from kzoo.distribution.layouts import expected_axes, unmatched_rules
from kzoo.models.albert.backbone import group_of_layer
from kzoo.core.arguments import ArgumentError

VOCAB = 97


def random_inputs(batch=4, seq=10, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(5, VOCAB, (batch, seq)).astype("int32")
    segment_ids = np.zeros((batch, seq), "int32")
    segment_ids[:, seq // 2:] = 1
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1::2, seq - 3:] = 0
    token_ids[padding_mask == 0] = 0
    return {"token_ids": token_ids, "segment_ids": segment_ids,
            "padding_mask": padding_mask}


@pytest.fixture
def backbone():
    return make_tiny_albert(vocabulary_size=VOCAB, **GROUPED)


def test_backbone_contract(backbone, tmp_path):
    check_backbone(backbone, random_inputs(), tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 10, 24),
                                    "pooled_output": (4, 24)})


def test_group_of_layer_is_the_originals():
    # transformers: int(i / (num_hidden_layers / num_hidden_groups)).
    assert [group_of_layer(i, 5, 2) for i in range(5)] == [0, 0, 0, 1, 1]
    assert [group_of_layer(i, 12, 1) for i in range(12)] == [0] * 12
    assert [group_of_layer(i, 6, 3) for i in range(6)] == [0, 0, 1, 1, 2, 2]


def test_shared_blocks_are_one_set_of_variables(backbone):
    # 2 groups x 2 distinct blocks for 5 layers: 4 blocks, each a single
    # layer called by every layer of its group, each weight one variable.
    blocks = [layer for layer in backbone.layers
              if layer.name.startswith("transformer_layer_")]
    assert [b.name for b in blocks] == [f"transformer_layer_{k}"
                                        for k in range(4)]
    assert backbone.shared_block(1, 1) is blocks[3]
    ids = [id(w) for w in backbone.weights]
    assert len(ids) == len(set(ids))
    # Layers 0-2 run group 0's two blocks, layers 3-4 group 1's: 6 and 4
    # calls.
    calls = {b.name: len(b._inbound_nodes) for b in blocks}
    assert calls == {"transformer_layer_0": 3, "transformer_layer_1": 3,
                     "transformer_layer_2": 2, "transformer_layer_3": 2}
    # A gradient step on a shared kernel moves every layer that uses it:
    # one variable, so there is nothing to keep in sync.
    kernel = blocks[0].attention.query_dense.kernel
    assert sum(w is kernel for w in backbone.trainable_weights) == 1


def test_factorised_embedding_shapes(backbone):
    layer = backbone.get_layer
    assert tuple(layer("token_embedding").embeddings.shape) == (VOCAB, 10)
    assert tuple(layer("position_embedding").embeddings.shape) == (64, 10)
    assert tuple(layer("segment_embedding").embeddings.shape) == (2, 10)
    assert tuple(layer("embeddings_layer_norm").gamma.shape) == (10,)
    assert tuple(layer("embedding_projection").kernel.shape) == (10, 24)


def test_parameter_count_matches_hf_formula():
    # transformers' AlbertModel: embeddings at E, the mapping E -> H, one
    # set of block weights per (group, inner layer), the pooler.
    v, e, h, i, p, t = VOCAB, 10, 24, 40, 64, 2
    groups, inner = 2, 2
    embeddings = (v + p + t) * e + 2 * e
    mapping = e * h + h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    pooler = h * h + h
    grouped = make_tiny_albert(vocabulary_size=v, **GROUPED)
    assert grouped.count_params() == \
        embeddings + mapping + groups * inner * block + pooler
    # The layer count does not change it: the blocks are shared.
    assert make_tiny_albert(vocabulary_size=v, **{
        **GROUPED, "num_layers": 9}).count_params() == grouped.count_params()
    assert make_tiny_albert(vocabulary_size=v).count_params() == \
        embeddings + mapping + block + pooler


def test_more_groups_than_layers_is_refused():
    with pytest.raises(ArgumentError, match=r"num_groups \(3\) must be at "
                                            r"most num_layers \(2\)"):
        make_tiny_albert(num_layers=2, num_groups=3)


def test_segment_ids_are_checked(backbone):
    inputs = random_inputs()
    inputs["segment_ids"][0, 0] = 2
    with pytest.raises(ValueError, match="segment_ids holds 2, outside"):
        backbone(inputs)


def test_layout_map_shards_each_shared_weight_once(backbone):
    mesh = keras.distribution.DeviceMesh(
        (2, 4), ("batch", "model"), [f"cpu:{i}" for i in range(8)])
    layout_map = kzoo.AlbertBackbone.get_layout_map(mesh)
    assert unmatched_rules(layout_map, backbone.weights) == []
    axes = {w.path: expected_axes(layout_map, w.path, len(w.shape))
            for w in backbone.weights}
    # One layout per shared variable: the token table and 10 weights per
    # block (q/k/v kernels and biases, the attention output kernel, the
    # FFN-in kernel and bias, the FFN-out kernel), for 4 blocks, not for
    # the 10 block calls of the 5 layers.
    sharded = [p for p, a in axes.items() if "model" in a]
    assert len(sharded) == len(set(sharded)) == 1 + 4 * 10
    assert axes["transformer_layer_3/attention/query/kernel"] == \
        (None, "model")
    assert axes["transformer_layer_3/output_dense/kernel"] == ("model", None)
    assert axes["token_embedding/embeddings"] == (None, "model")
    assert axes["embedding_projection/kernel"] == (None, None)


def test_config_round_trip_keeps_albert_arguments():
    backbone = make_tiny_albert(vocabulary_size=VOCAB,
                                layer_norm_epsilon=1e-7, **GROUPED)
    config = backbone.get_config()
    assert (config["embedding_dim"], config["num_groups"],
            config["num_inner_repetitions"]) == (10, 2, 2)
    rebuilt = kzoo.AlbertBackbone.from_config(config)
    rebuilt.set_weights(backbone.get_weights())
    inputs = random_inputs()
    np.testing.assert_allclose(
        to_numpy(rebuilt(inputs))["sequence_output"],
        to_numpy(backbone(inputs))["sequence_output"], atol=1e-6)
