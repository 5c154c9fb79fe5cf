"""<|endoftext|> marks where a text really ends: a text cut at
sequence_length gets none (keras-hub's packers truncate first and then add
the end token, which would teach a causal LM to stop mid-sentence)."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists, to_numpy

END = 50256
SEQ = 8


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.GPT2Tokenizer.from_preset("gpt2")


def words(n):
    """A text of exactly n tokens ("a", " b", " c", ...)."""
    return " ".join("abcdefghijklmnopqrstuvwxyz"[:n])


def test_word_helper_counts_tokens(tokenizer):
    for n in (1, 7, 8, 12):
        assert len(id_lists(tokenizer(words(n)))) == n


def causal_lm_outputs(preprocessor, texts, in_tf_data):
    if in_tf_data:
        dataset = tf.data.Dataset.from_tensor_slices(texts).batch(len(texts))
        return to_numpy(next(iter(dataset.map(preprocessor))))
    return to_numpy(preprocessor(texts))


@pytest.mark.parametrize("in_tf_data", [False, True], ids=["eager", "tf.data"])
def test_causal_lm_end_token_only_after_a_text_that_ends(tokenizer,
                                                         in_tf_data):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer,
                                                 sequence_length=SEQ)
    # start + 7 tokens + end fills the SEQ + 1 packed positions exactly;
    # 8 and 20 tokens do not fit, so those texts are cut.
    x, y, weights = causal_lm_outputs(
        preprocessor, [words(7), words(8), words(20)], in_tf_data)
    ids = id_lists(tokenizer([words(8)]))[0]
    assert y[0, -1] == END and weights[0].tolist() == [1] * SEQ
    for row in (1, 2):
        assert END not in y[row].tolist(), y[row]
        assert y[row].tolist() == ids[:SEQ]
        assert x["token_ids"][row].tolist() == [END] + ids[:SEQ - 1]
        assert weights[row].tolist() == [1] * SEQ


def test_causal_lm_without_end_token(tokenizer):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(
        tokenizer, sequence_length=SEQ, add_end_token=False)
    x, y, weights = to_numpy(preprocessor([words(3)]))
    assert x["token_ids"][0, :4].tolist() == [END] + \
        id_lists(tokenizer([words(3)]))[0]
    assert weights[0].tolist() == [1] * 3 + [0] * 5  # no end to predict


@pytest.mark.parametrize("in_tf_data", [False, True], ids=["eager", "tf.data"])
def test_classifier_end_token_only_after_a_text_that_ends(tokenizer,
                                                          in_tf_data):
    preprocessor = kzoo.GPT2Preprocessor(tokenizer, sequence_length=SEQ,
                                         add_end_token=True)
    texts = [words(7), words(8), words(20)]
    if in_tf_data:
        dataset = tf.data.Dataset.from_tensor_slices(texts).batch(3)
        x = to_numpy(next(iter(dataset.map(preprocessor))))
    else:
        x = to_numpy(preprocessor(texts))
    ids = id_lists(tokenizer([words(8)]))[0]
    assert x["token_ids"][0].tolist() == ids[:7] + [END]
    for row in (1, 2):
        assert x["token_ids"][row].tolist() == ids[:SEQ]
    np.testing.assert_array_equal(x["padding_mask"], np.ones((3, SEQ)))


def test_classifier_pairs_end_after_the_second_text_only_if_it_ends(
        tokenizer):
    preprocessor = kzoo.GPT2Preprocessor(tokenizer, sequence_length=SEQ,
                                         add_end_token=True)
    x = to_numpy(preprocessor(([words(20), words(20), words(2)],
                               [words(2), words(20), words(2)])))
    tokens = id_lists(tokenizer([words(20)]))[0]
    # A long first text is trimmed (round robin: the budget left by the
    # short second text); the second one ends, so the end token follows.
    assert x["token_ids"][0].tolist() == tokens[:4] + [END] + \
        tokens[:2] + [END]
    assert x["padding_mask"][0].tolist() == [1] * SEQ
    # Both cut (round robin, half each): no end token after the cut.
    assert x["token_ids"][1].tolist() == tokens[:4] + [END] + tokens[:3]
    # Both short: delimiter between, end token after, padding.
    assert x["token_ids"][2].tolist() == tokens[:2] + [END] + tokens[:2] + \
        [END] + [END] * 2
    assert x["padding_mask"][2].tolist() == [1] * 6 + [0] * 2
