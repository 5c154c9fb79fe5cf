"""RemBertTokenizer and RemBertPreprocessor against transformers'
RemBertTokenizer built from the same SentencePiece model (a real one in
RemBERT's layout: tests/data/README.md), eagerly and in tf.data."""

import shutil

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import id_lists
from rembert_testing import (REMBERT_PRESET, REMBERT_SPM, REMBERT_VOCABULARY,
                             SPECIAL_IDS)

transformers = pytest.importorskip("transformers")

# Cased, accented and quoted text, runs of spaces: where the two would
# differ if they did.
TEXTS = [
    "Hello world",
    "Ünïcödé: café, naïve, résumé, Ångström",
    "UPPER lower MiXeD",
    "``quoted'' and 'single' quotes, don't",
    "spaces    between  words",
    "numbers 1234567 3.14159 and symbols @#$%^&*()",
    "",
]
# Special tokens typed in text: each is its one id in both.
TYPED_SPECIALS = [
    "The [MASK] sat on the mat.",
    "a[MASK]b [MASK][MASK] [MASK]",
    "[CLS] typed [SEP] specials stay whole",
]


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.RemBertTokenizer.from_preset(REMBERT_PRESET)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """transformers' RemBertTokenizer from the same sentencepiece.model
    (its defaults: cased, accents kept, as the released model)."""
    folder = tmp_path_factory.mktemp("hf_rembert_tokenizer")
    shutil.copyfile(REMBERT_SPM, folder / "sentencepiece.model")
    transformers.logging.set_verbosity_error()
    return transformers.RemBertTokenizer.from_pretrained(folder)


def test_ids_match_transformers_eagerly_and_in_tf_data(tokenizer, reference):
    expected = [reference(t, add_special_tokens=False)["input_ids"]
                for t in TEXTS]
    assert id_lists(tokenizer(TEXTS)) == expected
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(len(TEXTS))
    assert id_lists(next(iter(dataset.map(tokenizer)))) == expected


def test_typed_specials_are_one_id_without_a_lone_space_piece(tokenizer,
                                                              reference):
    """The space before a typed special token is no piece of its own in
    kzoo (as kzoo's ALBERT and XLM-R, and transformers' ALBERT, whose
    `[MASK]` takes the space before it); transformers 5's RemBertTokenizer
    built from a sentencepiece.model keeps it as a lone "▁" piece.
    Otherwise the ids are the same (a word after a special token starts
    with "▁" in both)."""
    specials = set(SPECIAL_IDS.values())
    lone_space = reference.convert_tokens_to_ids("\u2581")
    for text in TYPED_SPECIALS:
        ids = reference(text, add_special_tokens=False)["input_ids"]
        before_special = [i == lone_space and k + 1 < len(ids)
                          and ids[k + 1] in specials
                          for k, i in enumerate(ids)]
        assert any(before_special), text  # the difference is real
        expected = [i for i, drop in zip(ids, before_special) if not drop]
        assert id_lists(tokenizer([text]))[0] == expected, text


def test_special_ids_come_from_the_model(tokenizer, reference):
    t = tokenizer
    assert (t.pad_token_id, t.unk_token_id, t.cls_token_id, t.sep_token_id,
            t.mask_token_id) == tuple(SPECIAL_IDS.values())
    assert (reference.pad_token_id, reference.unk_token_id,
            reference.cls_token_id, reference.sep_token_id,
            reference.mask_token_id) == tuple(SPECIAL_IDS.values())
    assert t.vocabulary_size == REMBERT_VOCABULARY
    assert (t.lowercase, t.keep_accents) == (False, True)
    # Multilingual word starts: SentencePiece's ("▁"), not ALBERT's rule.
    table = t.word_start_table()
    ids = id_lists(t(["Hello world"]))[0]
    assert table[ids].tolist() == [True, False, False, True]


def test_packing_is_transformers(tokenizer, reference):
    preprocessor = kzoo.RemBertPreprocessor(tokenizer, sequence_length=24)
    first, second = ["The first text.", "Ångström"], ["and a second", "x"]
    packed = preprocessor((first, second))
    for row, (a, b) in enumerate(zip(first, second)):
        ids_a = reference(a, add_special_tokens=False)["input_ids"]
        ids_b = reference(b, add_special_tokens=False)["input_ids"]
        # RemBertTokenizer's build_inputs_with_special_tokens.
        ids = [3] + ids_a + [4] + ids_b + [4]
        expected_ids = ids + [0] * (24 - len(ids))
        segments = [0] * (len(ids_a) + 2) + [1] * (len(ids_b) + 1)
        np.testing.assert_array_equal(packed["token_ids"][row], expected_ids)
        np.testing.assert_array_equal(
            packed["segment_ids"][row], segments + [0] * (24 - len(ids)))
        np.testing.assert_array_equal(
            packed["padding_mask"][row],
            [1] * len(ids) + [0] * (24 - len(ids)))
