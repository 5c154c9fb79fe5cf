"""DebertaV3Backbone: the shared backbone contract, the parameter count,
relative positions (no absolute table: shifting padding changes
nothing), inputs longer than the bucket range."""

import numpy as np
import pytest

import kzoo
from deberta_v3_testing import make_tiny_deberta
from helpers import check_backbone, to_numpy
from kzoo.core.arguments import ArgumentError

VOCAB = 97


def random_inputs(batch=4, seq=10, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(4, VOCAB, (batch, seq)).astype("int32")
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1::2, seq - 3:] = 0
    token_ids[padding_mask == 0] = 0
    return {"token_ids": token_ids, "padding_mask": padding_mask}


@pytest.fixture
def backbone():
    return make_tiny_deberta(vocabulary_size=VOCAB)


def test_backbone_contract(backbone, tmp_path):
    # 64 tokens: far past the 8 buckets' exact range and the 16 they reach.
    check_backbone(backbone, random_inputs(), tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 10, 32)})


def test_relative_positions_only(backbone):
    # No absolute positions: a text gives the same outputs wherever the
    # padding sits.
    ids = np.array([[1, 7, 8, 9, 2]], "int32")
    right = {"token_ids": np.concatenate([ids, [[0] * 3]], 1),
             "padding_mask": np.array([[1] * 5 + [0] * 3], "int32")}
    left = {"token_ids": np.concatenate([[[0] * 3], ids], 1),
            "padding_mask": np.array([[0] * 3 + [1] * 5], "int32")}
    a = to_numpy(backbone(right, training=False))["sequence_output"]
    b = to_numpy(backbone(left, training=False))["sequence_output"]
    np.testing.assert_allclose(a[0, :5], b[0, 3:], atol=1e-5)
    assert backbone.input_names == ("token_ids", "padding_mask")
    names = {w.path.split("/")[0] for w in backbone.weights}
    assert "position_embedding" not in names and "pooler" not in names


def test_parameter_count_matches_formula():
    v, h, i, span, layers = 97, 32, 64, 8, 2
    embeddings = v * h + 2 * h + 2 * span * h + 2 * h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    assert make_tiny_deberta(vocabulary_size=v).count_params() == \
        embeddings + layers * block
    # Without share_att_key each layer has its own two position projections.
    unshared = make_tiny_deberta(vocabulary_size=v, share_att_key=False)
    assert unshared.count_params() == \
        embeddings + layers * (block + 2 * (h * h + h))
    # No buckets: the table spans max_relative_positions each way.
    plain = make_tiny_deberta(vocabulary_size=v, position_buckets=0)
    assert plain.get_layer("relative_embedding").embeddings.shape == (32, h)


@pytest.mark.parametrize("overrides,match", [
    ({"pad_token_id": 97}, r"pad_token_id \(97\) must be a token id"),
    ({"position_buckets": 1}, "position_buckets must be 0"),
    ({"share_att_key": "yes"}, "share_att_key"),
])
def test_bad_arguments_are_named(overrides, match):
    with pytest.raises(ArgumentError, match=match):
        make_tiny_deberta(vocabulary_size=VOCAB, **overrides)


def test_config_round_trip():
    backbone = make_tiny_deberta(vocabulary_size=VOCAB, share_att_key=False,
                                 layer_norm_epsilon=1e-6)
    config = backbone.get_config()
    assert config["share_att_key"] is False
    assert config["position_buckets"] == 8
    assert kzoo.DebertaV3Backbone.from_config(config).count_params() == \
        backbone.count_params()
