"""BertPreprocessor: [CLS] a [SEP] (b [SEP]), segment ids, padding,
truncation; eager and inside tf.data."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists, to_numpy

CLS, SEP, PAD = 101, 102, 0


@pytest.fixture(scope="module")
def preprocessor():
    return kzoo.BertPreprocessor.from_preset("bert_base_en_uncased",
                                             sequence_length=12)


def ids_of(tokenizer, text):
    return id_lists(tokenizer([text]))[0]


def test_single_segment(preprocessor):
    out = to_numpy(preprocessor(["hello world", "the quick brown fox"]))
    hello = ids_of(preprocessor.tokenizer, "hello world")
    fox = ids_of(preprocessor.tokenizer, "the quick brown fox")
    expected = [[CLS, *hello, SEP], [CLS, *fox, SEP]]
    for row, ids in enumerate(expected):
        padded = ids + [PAD] * (12 - len(ids))
        assert out["token_ids"][row].tolist() == padded
        assert out["padding_mask"][row].tolist() == \
            [1] * len(ids) + [0] * (12 - len(ids))
        assert out["segment_ids"][row].tolist() == [0] * 12
    assert out["token_ids"].shape == (2, 12)


def test_sentence_pairs(preprocessor):
    out = to_numpy(preprocessor((["hello world"], ["the fox"])))
    a = ids_of(preprocessor.tokenizer, "hello world")
    b = ids_of(preprocessor.tokenizer, "the fox")
    ids = [CLS, *a, SEP, *b, SEP]
    assert out["token_ids"][0].tolist() == ids + [PAD] * (12 - len(ids))
    segments = [0] * (len(a) + 2) + [1] * (len(b) + 1)
    assert out["segment_ids"][0].tolist() == \
        segments + [0] * (12 - len(segments))
    assert out["padding_mask"][0].tolist() == \
        [1] * len(ids) + [0] * (12 - len(ids))


def test_truncation_to_sequence_length(preprocessor):
    long_text = " ".join(["word"] * 40)
    out = to_numpy(preprocessor([long_text]))
    assert out["token_ids"].shape == (1, 12)
    assert out["token_ids"][0, 0] == CLS and out["token_ids"][0, -1] == SEP
    assert out["padding_mask"].min() == 1
    # Pairs: round robin trims the longer text first, both keep a [SEP].
    out = to_numpy(preprocessor(([long_text], ["short one"])))
    token_ids = out["token_ids"][0].tolist()
    assert len(token_ids) == 12 and token_ids.count(SEP) == 2
    short = ids_of(preprocessor.tokenizer, "short one")
    assert token_ids[-len(short) - 1:] == short + [SEP]
    assert out["segment_ids"][0].tolist() == \
        [0] * (12 - len(short) - 1) + [1] * (len(short) + 1)


def test_sequence_length_override_and_config():
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_base",
                                                     sequence_length=7)
    assert preprocessor.sequence_length == 7
    assert to_numpy(preprocessor(["a b c d e f g h i"]))["token_ids"].shape \
        == (1, 7)
    config = preprocessor.get_config()
    rebuilt = kzoo.BertPreprocessor.from_config(
        config, tokenizer=preprocessor.tokenizer)
    assert rebuilt.get_config() == config


def test_labels_and_weights_pass_through(preprocessor):
    x, y, w = preprocessor(["hello"], np.array([1]), np.array([0.5]))
    assert to_numpy(y).tolist() == [1]
    assert to_numpy(w).tolist() == [0.5]
    assert sorted(x) == ["padding_mask", "segment_ids", "token_ids"]


def test_in_tf_data_equals_eager(preprocessor):
    texts = ["It is a truth universally acknowledged", "that a single man"]
    eager = to_numpy(preprocessor(texts))
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(2)
    in_graph = to_numpy(next(iter(dataset.map(preprocessor))))
    for key in eager:
        np.testing.assert_array_equal(in_graph[key], eager[key])
