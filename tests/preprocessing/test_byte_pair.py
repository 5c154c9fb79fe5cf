"""kzoo's byte-level BPE graph (kzoo.preprocessing.byte_pair) gives the ids
the eager path (the `tokenizers` library, GPT-2's regex) gives, on the
texts where emulating GPT-2's look-ahead is hard: runs of whitespace of
every kind before words and at the ends, special tokens, and characters
an emulation could take for its own markers."""

import random

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists
from text_testing import make_tokenizer

# TensorFlow whatever the Keras backend: once per suite.
pytestmark = pytest.mark.once

# Whitespace of every kind GPT-2's `\s` matches (and \x1c, which Python's
# str.isspace takes but Unicode's White_Space does not), Devanagari six
# (keras-hub's graph used it as its marker and dropped it), keras-hub's
# stand-in for special tokens, contractions, NUL, and special tokens.
PIECES = [*"abXY9'.!-é日😀", *"  \t\n\r\x0b\x0c\x1c\x85\xa0\u1680\u2003"
          "\u2028\u2029\u202f\u205f\u3000", "\u096c", "\u0134A", "\x00",
          "'s", "'ll", "'S", "don't", "\n\n", "\r\n", "  \n", "\u0967\u096c",
          "<|endoftext|>", "<s>", "</s>", "<mask>", " <mask>"]


def random_texts(count, seed):
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 20)))
            for _ in range(count)]


def in_graph(tokenizer, texts):
    return id_lists(tf.function(tokenizer)(tf.constant(texts)))


@pytest.mark.parametrize("tokenizer_cls", [kzoo.GPT2Tokenizer,
                                           kzoo.RobertaTokenizer])
def test_graph_gives_the_eager_ids(tokenizer_cls):
    tokenizer = make_tokenizer(tokenizer_cls)
    texts = random_texts(1500, seed=0)
    eager = [id_lists(tokenizer(text)) for text in texts]
    graph = in_graph(tokenizer, texts)
    differ = [(text, e, g) for text, e, g in zip(texts, eager, graph)
              if e != g]
    assert not differ, (len(differ), differ[:3])


def test_a_paragraph_break_before_a_word_is_two_newlines():
    # GPT-2's `\s+(?!\S)` leaves the last "\n" of the run apart: 198, 198
    # (the `tokenizers` library and OpenAI's encoder agree). keras-hub's
    # graph gave 628 ("\n\n") here, different ids in tf.data than eagerly.
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    expected = [[15496, 198, 198, 10603], [64, 628, 275], [87, 220, 628]]
    texts = ["Hello\n\nWorld", "a\n\n b", "x \n\n"]
    assert [id_lists(tokenizer(text)) for text in texts] == expected
    assert in_graph(tokenizer, texts) == expected
    dataset = tf.data.Dataset.from_tensor_slices(texts).map(tokenizer)
    assert [id_lists(ids) for ids in dataset] == expected


def test_repeated_words_and_empty_texts_in_one_batch():
    # Words repeated across a batch are merged once (tf.unique) and given
    # back to each place; empty texts and texts of whitespace keep rows.
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    texts = [" the cat the cat", "", "   ", "the", "cat the\n"]
    ids = in_graph(tokenizer, texts)
    assert ids == [id_lists(tokenizer(text)) for text in texts]
    assert ids[1] == [] and len(ids) == 5
    assert np.array_equal(ids[0][:2], ids[0][2:])
