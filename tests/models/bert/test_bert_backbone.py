"""BertBackbone: the shared backbone contract plus BERT specifics."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import (assert_all_close, check_backbone, make_tiny_bert,
                     random_bert_inputs, to_numpy)

VOCAB = 97


@pytest.fixture
def backbone():
    return make_tiny_bert(vocabulary_size=VOCAB)


@pytest.fixture
def inputs():
    return random_bert_inputs(batch=4, seq=10, vocabulary_size=VOCAB)


def test_backbone_contract(backbone, inputs, tmp_path):
    check_backbone(backbone, inputs, tmp_path, lengths=[1, 64],
                   expected_shapes={"sequence_output": (4, 10, 32),
                                    "pooled_output": (4, 32)})


def test_padding_does_not_change_real_tokens(backbone, inputs):
    # Row 1 has three padded positions; whatever ids sit there, the real
    # tokens' outputs are the same.
    out = to_numpy(backbone(inputs, training=False))
    changed = {k: v.copy() for k, v in inputs.items()}
    changed["token_ids"][1, -3:] = [5, 6, 7]
    changed["segment_ids"][1, -3:] = 1
    out2 = to_numpy(backbone(changed, training=False))
    np.testing.assert_allclose(out2["sequence_output"][1, :-3],
                               out["sequence_output"][1, :-3], atol=1e-5)
    np.testing.assert_allclose(out2["pooled_output"][1],
                               out["pooled_output"][1], atol=1e-5)
    # ...and a real token's id does change them (the check above can fail).
    changed["token_ids"][1, 0] = (inputs["token_ids"][1, 0] + 1) % VOCAB
    out3 = to_numpy(backbone(changed, training=False))
    assert not np.allclose(out3["pooled_output"][1], out["pooled_output"][1])


def test_segment_ids_matter(backbone, inputs):
    out = to_numpy(backbone(inputs, training=False))
    flipped = {**inputs, "segment_ids": 1 - inputs["segment_ids"]}
    out2 = to_numpy(backbone(flipped, training=False))
    assert not np.allclose(out["pooled_output"], out2["pooled_output"])


def test_dropout_only_in_training(backbone, inputs):
    a = to_numpy(backbone(inputs, training=False))
    b = to_numpy(backbone(inputs, training=False))
    assert_all_close(a, b, atol=0.0)
    c = to_numpy(backbone(inputs, training=True))
    assert not np.allclose(a["sequence_output"], c["sequence_output"])


def test_config_holds_every_argument():
    backbone = kzoo.BertBackbone(
        vocabulary_size=50, num_layers=1, num_heads=4, hidden_dim=16,
        intermediate_dim=24, dropout=0.05, attention_dropout=0.2,
        max_sequence_length=20, num_segments=3, activation="relu",
        layer_norm_epsilon=1e-6, initializer_range=0.05)
    config = backbone.get_config()
    for key, value in dict(vocabulary_size=50, num_layers=1, num_heads=4,
                           hidden_dim=16, intermediate_dim=24, dropout=0.05,
                           attention_dropout=0.2, max_sequence_length=20,
                           num_segments=3, activation="relu",
                           layer_norm_epsilon=1e-6,
                           initializer_range=0.05).items():
        assert config[key] == value, key
    assert kzoo.BertBackbone.from_config(config).count_params() == \
        backbone.count_params()


def test_parameter_count_matches_formula():
    v, h, i, p, s, layers = 97, 32, 64, 64, 2, 2
    embeddings = v * h + p * h + s * h + 2 * h
    block = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    pooler = h * h + h
    assert make_tiny_bert(vocabulary_size=v).count_params() == \
        embeddings + layers * block + pooler


def test_mixed_precision_policy(inputs):
    backbone = make_tiny_bert(vocabulary_size=VOCAB, dtype="mixed_float16")
    out = backbone(inputs, training=False)
    assert keras.backend.standardize_dtype(out["sequence_output"].dtype) == \
        "float16"
    assert backbone.token_embedding.embeddings.dtype == "float32"
    assert np.all(np.isfinite(to_numpy(out["sequence_output"])))
    # Training mode (dropout, explicit attention) stays in float16 too.
    out = backbone(inputs, training=True)
    assert keras.backend.standardize_dtype(out["pooled_output"].dtype) == \
        "float16"
    assert np.all(np.isfinite(to_numpy(out["sequence_output"])))
