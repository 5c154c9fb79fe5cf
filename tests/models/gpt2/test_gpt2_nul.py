"""NUL characters inside tf.data: tensorflow-text's regex_split stops at
the first NUL, so keras-hub's tf path alone would tokenize "a\\x00b" as "a"
and silently drop the rest. GPT2Tokenizer works around it."""

import json

import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

TEXTS = ["a\x00b", "\x00", "!\x00?", "\x00\x01\x00 x\x01", " \x00\x00 end",
         "no nul here", "<|endoftext|>\x00"]


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.GPT2Tokenizer.from_preset("gpt2")


def in_tf_data(fn, texts):
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(len(texts))
    return next(iter(dataset.map(fn)))


def test_nul_in_tf_data_matches_eager(tokenizer):
    eager = tokenizer(TEXTS)
    assert eager[0] == [64, 188, 65]  # NUL is byte 0: "Ā", id 188
    assert id_lists(in_tf_data(tokenizer, TEXTS)) == eager
    decoded = in_tf_data(lambda t: tokenizer.detokenize(tokenizer(t)), TEXTS)
    assert [t.decode("utf-8") for t in decoded.numpy().tolist()] == TEXTS


def test_unbatched_nul_in_tf_data(tokenizer):
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).map(tokenizer)
    assert [ids.numpy().tolist() for ids in dataset] == tokenizer(TEXTS)


def test_vocabulary_that_merges_nul_is_refused_loudly(tmp_path):
    # With a merge rule on NUL's byte the stand-in would not be exact: NUL
    # in tf.data is then an error, never silently dropped text.
    vocab = {"Ā": 0, "ā": 1, "a": 2, "b": 3, "ĀĀ": 4, "<|endoftext|>": 5}
    (tmp_path / "vocab.json").write_text(json.dumps(vocab))
    (tmp_path / "merges.txt").write_text("#version: 0.2\nĀ Ā\n")
    tokenizer = kzoo.GPT2Tokenizer(tmp_path / "vocab.json",
                                   tmp_path / "merges.txt")
    assert tokenizer(["\x00\x00"]) == [[4]]
    assert id_lists(in_tf_data(tokenizer, ["ab"])) == [[2, 3]]
    with pytest.raises(tf.errors.InvalidArgumentError,
                       match=r"cannot tokenize NUL.*remove them"):
        in_tf_data(tokenizer, ["a\x00a"])
