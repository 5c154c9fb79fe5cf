"""DistilBertBackbone: the shared backbone contract, no token types, no
pooler, the sinusoidal option, and Hugging Face's parameter count."""

import numpy as np
import pytest

import kzoo
from distil_bert_testing import make_tiny_distil_bert
from helpers import check_backbone, to_numpy
from kzoo.core.arguments import ArgumentError

VOCAB = 97


def random_inputs(batch=4, seq=10, seed=0):
    """Random ids, with a right-padded tail in every second row."""
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(1, VOCAB, (batch, seq)).astype("int32")
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1::2, seq - 3:] = 0
    token_ids[padding_mask == 0] = 0
    return {"token_ids": token_ids, "padding_mask": padding_mask}


@pytest.mark.parametrize("sinusoidal", [False, True])
def test_backbone_contract(sinusoidal, tmp_path):
    backbone = make_tiny_distil_bert(
        vocabulary_size=VOCAB, sinusoidal_position_embeddings=sinusoidal)
    check_backbone(backbone, random_inputs(), tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 10, 32)})


def test_no_token_types_no_pooler():
    backbone = make_tiny_distil_bert(vocabulary_size=VOCAB)
    assert backbone.input_names == ("token_ids", "padding_mask")
    names = {layer.name for layer in backbone.layers}
    assert "segment_embedding" not in names and "pooler" not in names
    with pytest.raises(ValueError, match="longer than DistilBertBackbone's "
                                         "max_sequence_length"):
        backbone({"token_ids": np.zeros((1, 65), "int32"),
                  "padding_mask": np.ones((1, 65), "int32")})
    with pytest.raises(ValueError, match="takes inputs"):
        backbone({"token_ids": np.zeros((1, 5), "int32"),
                  "segment_ids": np.zeros((1, 5), "int32"),
                  "padding_mask": np.ones((1, 5), "int32")})


def test_padding_does_not_change_real_tokens():
    backbone = make_tiny_distil_bert(vocabulary_size=VOCAB)
    ids = np.array([[2, 7, 8, 9, 3]], "int32")
    short = {"token_ids": ids, "padding_mask": np.ones((1, 5), "int32")}
    padded = {"token_ids": np.concatenate([ids, [[0] * 3]], 1),
              "padding_mask": np.array([[1] * 5 + [0] * 3], "int32")}
    a = to_numpy(backbone(short, training=False))["sequence_output"]
    b = to_numpy(backbone(padded, training=False))["sequence_output"]
    np.testing.assert_allclose(a[0], b[0, :5], atol=1e-5)


def hf_parameter_count(v, h, i, p, layers):
    """Hugging Face's DistilBertModel: embeddings + LayerNorm, then per
    layer q/k/v/out, two LayerNorms, the FFN (no token types, no pooler)."""
    embeddings = v * h + p * h + 2 * h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embeddings + layers * block


def test_parameter_count_matches_hugging_face():
    transformers = pytest.importorskip("transformers")
    config = transformers.DistilBertConfig(
        vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
        max_position_embeddings=64)
    expected = hf_parameter_count(VOCAB, 32, 64, 64, 2)
    assert transformers.DistilBertModel(config).num_parameters() == expected
    assert make_tiny_distil_bert(vocabulary_size=VOCAB).count_params() == \
        expected


def test_sinusoidal_argument_is_checked():
    with pytest.raises(ArgumentError, match="sinusoidal_position_embeddings"):
        make_tiny_distil_bert(sinusoidal_position_embeddings="yes")


def test_config_round_trip():
    backbone = make_tiny_distil_bert(vocabulary_size=VOCAB,
                                     sinusoidal_position_embeddings=True,
                                     activation="relu")
    config = backbone.get_config()
    assert config["sinusoidal_position_embeddings"] is True
    rebuilt = kzoo.DistilBertBackbone.from_config(config)
    assert rebuilt.count_params() == backbone.count_params()
    assert not rebuilt.get_layer("position_embedding").trainable
