"""Tokenizers made from the same files share one keras-hub tokenizer
(building one takes up to a second); different contents never do."""

import shutil

import pytest

import kzoo
from kzoo import presets

pytestmark = pytest.mark.once


def vocab_file():
    return presets.resolve("bert_tiny_en_uncased").path / "vocab.txt"


def test_same_files_share_one_keras_hub_tokenizer(tmp_path):
    first = kzoo.BertTokenizer(vocabulary=vocab_file())
    # A copy elsewhere: same contents, so the same keras-hub tokenizer.
    copy = shutil.copy(vocab_file(), tmp_path / "vocab.txt")
    second = kzoo.ElectraTokenizer(vocabulary=copy, lowercase=False)
    assert second._hub() is first._hub()
    assert second(["Hello"]) == kzoo.BertTokenizer(
        vocabulary=vocab_file(), lowercase=False)(["Hello"])


def test_changed_contents_get_their_own(tmp_path):
    first = kzoo.BertTokenizer(vocabulary=vocab_file())
    tokens = vocab_file().read_text(encoding="utf-8").splitlines()
    # The same file name, rewritten with one more token at the end.
    path = tmp_path / "vocab.txt"
    path.write_text("\n".join(tokens + ["zzzqqq"]) + "\n", encoding="utf-8")
    grown = kzoo.BertTokenizer(vocabulary=path)
    assert grown._hub() is not first._hub()
    assert grown.vocabulary_size == first.vocabulary_size + 1
    assert grown(["zzzqqq"]) == [[first.vocabulary_size]]
