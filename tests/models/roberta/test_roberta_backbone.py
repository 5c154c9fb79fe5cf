"""RobertaBackbone: the shared backbone contract plus RoBERTa's position
numbering and single token type."""

import numpy as np
import pytest

import kzoo
from roberta_testing import make_tiny_roberta
from helpers import check_backbone, to_numpy
from kzoo.core.arguments import ArgumentError
from kzoo.models.roberta.backbone import roberta_position_ids

VOCAB = 97
PAD = 1


def random_inputs(batch=4, seq=10, seed=0):
    """Random ids avoiding <pad>, with a right-padded tail in every second
    row."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(3, VOCAB, (batch, seq)).astype("int32")
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1::2, seq - 3:] = 0
    token_ids[padding_mask == 0] = PAD
    return {"token_ids": token_ids, "padding_mask": padding_mask}


@pytest.fixture
def backbone():
    return make_tiny_roberta(vocabulary_size=VOCAB)


def test_backbone_contract(backbone, tmp_path):
    check_backbone(backbone, random_inputs(), tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 10, 32),
                                    "pooled_output": (4, 32)})


def test_position_ids_count_real_tokens():
    ids = np.array([[0, 5, 6, 2, 1, 1],     # right padded
                    [1, 1, 0, 5, 6, 2],     # left padded
                    [0, 5, 1, 6, 2, 1]])    # a <pad> inside
    positions = to_numpy(roberta_position_ids(ids, PAD))
    np.testing.assert_array_equal(positions, [[2, 3, 4, 5, 1, 1],
                                              [1, 1, 2, 3, 4, 5],
                                              [2, 3, 1, 4, 5, 1]])


def test_left_and_right_padding_agree(backbone):
    # Positions follow the real tokens, so where the padding sits does not
    # change a real token's output.
    ids = np.array([[0, 7, 8, 9, 2]], "int32")
    right = {"token_ids": np.concatenate([ids, [[PAD] * 3]], 1),
             "padding_mask": np.array([[1] * 5 + [0] * 3], "int32")}
    left = {"token_ids": np.concatenate([[[PAD] * 3], ids], 1),
            "padding_mask": np.array([[0] * 3 + [1] * 5], "int32")}
    a = to_numpy(backbone(right, training=False))["sequence_output"]
    b = to_numpy(backbone(left, training=False))["sequence_output"]
    np.testing.assert_allclose(a[0, :5], b[0, 3:], atol=1e-5)


def test_one_token_type_no_segment_input(backbone):
    assert backbone.input_names == ("token_ids", "padding_mask")
    assert tuple(backbone.get_layer("segment_embedding").embeddings.shape) \
        == (1, 32)
    # 64 usable positions after the padding index: 64 + 1 + 1 rows.
    assert tuple(backbone.get_layer("position_embedding").embeddings.shape) \
        == (66, 32)
    with pytest.raises(ValueError, match="longer than RobertaBackbone's "
                                         "max_sequence_length"):
        backbone({"token_ids": np.zeros((1, 65), "int32"),
                  "padding_mask": np.ones((1, 65), "int32")})


def test_parameter_count_matches_formula():
    v, h, i, p, layers = 97, 32, 64, 64 + PAD + 1, 2
    embeddings = v * h + p * h + h + 2 * h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    pooler = h * h + h
    assert make_tiny_roberta(vocabulary_size=v).count_params() == \
        embeddings + layers * block + pooler


def test_pad_token_id_must_be_a_token():
    with pytest.raises(ArgumentError, match=r"pad_token_id \(97\) must be a "
                                            r"token id, below vocabulary"):
        make_tiny_roberta(vocabulary_size=VOCAB, pad_token_id=97)


def test_config_round_trip_keeps_pad_token_id():
    backbone = make_tiny_roberta(vocabulary_size=VOCAB, pad_token_id=0,
                                 layer_norm_epsilon=1e-7)
    config = backbone.get_config()
    assert config["pad_token_id"] == 0 and config["layer_norm_epsilon"] == 1e-7
    assert kzoo.RobertaBackbone.from_config(config).count_params() == \
        backbone.count_params()
