"""AlbertTokenizer and AlbertPreprocessor against transformers'
AlbertTokenizer built from the same SentencePiece model (a real one in
ALBERT's layout), on hard strings, eagerly and in tf.data."""

import shutil

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from albert_testing import (ALBERT_SPM, ALBERT_VOCABULARY, HARD_TEXTS as HARD,
                            SPECIAL_IDS)
from helpers import id_lists, to_numpy
from kzoo.core.tokenizer import TokenizerAssetError

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")

PAIRS = (["The first text.", "短い", "x" * 40],
         ["and the second one", "🙂 [MASK] ok", "y y y y y y y y"])


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """transformers' AlbertTokenizer from the same spiece.model (its
    defaults: do_lower_case, no keep_accents, as the released models)."""
    folder = tmp_path_factory.mktemp("hf_albert_tokenizer")
    shutil.copyfile(ALBERT_SPM, folder / "spiece.model")
    transformers.logging.set_verbosity_error()
    return transformers.AlbertTokenizer.from_pretrained(folder)


def test_hard_strings_eager(albert_tokenizer, reference):
    for text in HARD:
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert id_lists(albert_tokenizer([text]))[0] == expected, text


def test_hard_strings_in_tf_data(albert_tokenizer, reference):
    dataset = tf.data.Dataset.from_tensor_slices(HARD).batch(len(HARD))
    ids = next(iter(dataset.map(albert_tokenizer)))
    assert id_lists(ids) == [
        reference(t, add_special_tokens=False)["input_ids"] for t in HARD]


def test_detokenize_matches_transformers(albert_tokenizer, reference):
    for text in ("Hello world", "whitespace    runs \n between words",
                 "numbers 12 and café, naïve"):
        ids = reference(text, add_special_tokens=False)["input_ids"]
        assert albert_tokenizer.detokenize(ids) == reference.decode(ids)
    # <unk> decodes as SentencePiece renders it (the original ALBERT's
    # decoding), where transformers writes the token's name.
    ids = reference("a 🙂 b", add_special_tokens=False)["input_ids"]
    assert albert_tokenizer.detokenize(ids) == "a  \u2047  b"
    assert reference.decode(ids) == "a <unk> b"


def test_special_ids_come_from_the_model(albert_tokenizer):
    t = albert_tokenizer
    assert (t.pad_token_id, t.unk_token_id, t.cls_token_id, t.sep_token_id,
            t.mask_token_id) == tuple(SPECIAL_IDS.values())
    assert t.vocabulary_size == ALBERT_VOCABULARY
    assert t.special_token_ids == [0, 1, 2, 3, 4]
    assert id_lists(t(["[MASK]"]))[0] == [4]
    # Whole-word masking reads which ids begin a word.
    table = t.word_start_table()
    assert table.shape == (ALBERT_VOCABULARY,) and table[:5].all()
    ids = id_lists(t(["Hello world"]))[0]
    assert table[ids].tolist() == [True, False, False, True]


def test_word_starts_are_albert_pretraining_words(albert_tokenizer):
    # google-research/albert create_pretraining_data.py, _is_start_piece_sp:
    # a piece starts a word if it starts with "▁" (or "<"), is one of its
    # punctuation marks, or holds a character outside a-z and those marks
    # (whose string lacks the apostrophe); the stand-in's pieces.
    expected = {"▁the": True, ",": True, ".": True, '"': True, ";": True,
                "'": True, "\r": True, '."': False, ',"': False,
                "ing": False, "s": False, "I": False, "ation": False}
    table = albert_tokenizer.word_start_table()
    got = {piece: bool(table[albert_tokenizer.token_to_id(piece)])
           for piece in expected}
    assert got == expected
    assert table[:5].all()  # the special pieces


def test_case_and_accent_options(reference):
    cased = kzoo.AlbertTokenizer(ALBERT_SPM, lowercase=False,
                                 keep_accents=True)
    folder_reference = transformers.AlbertTokenizer.from_pretrained(
        reference.name_or_path, do_lower_case=False, keep_accents=True)
    for text in ("Ünïcödé Café", "HELLO World", "naïve résumé"):
        assert id_lists(cased([text]))[0] == folder_reference(
            text, add_special_tokens=False)["input_ids"], text
    assert cased.get_config()["lowercase"] is False
    assert cased.get_config()["keep_accents"] is True


def test_a_model_without_albert_pieces_is_refused():
    # The real model the stand-in is made from has none of ALBERT's
    # special pieces; transformers cannot build an AlbertTokenizer from
    # it either.
    with pytest.raises(TokenizerAssetError, match=r"lacks the special tokens "
                                                  r"'<pad>', '\[CLS\]'"):
        kzoo.AlbertTokenizer("tests/data/spm/botchan_en_unigram_1000.model")


def test_a_file_that_is_no_model_is_refused(tmp_path):
    bad = tmp_path / "spiece.model"
    bad.write_bytes(b"\x0a\xff\xff")
    with pytest.raises(TokenizerAssetError, match="not a SentencePiece "
                                                  "model"):
        kzoo.AlbertTokenizer(str(bad))


@pytest.mark.parametrize("truncated", [False, True])
def test_packing_matches_transformers(albert_tokenizer, reference,
                                      truncated):
    length = 12 if truncated else 40
    preprocessor = kzoo.AlbertPreprocessor(albert_tokenizer,
                                           sequence_length=length)
    for x, (a, b) in ((PAIRS[0], (PAIRS[0], None)), (PAIRS, PAIRS)):
        packed = to_numpy(preprocessor(x))
        expected = reference(
            list(a), None if b is None else list(b), padding="max_length",
            truncation="longest_first", max_length=length,
            return_token_type_ids=True)
        np.testing.assert_array_equal(packed["token_ids"],
                                      expected["input_ids"])
        np.testing.assert_array_equal(packed["segment_ids"],
                                      expected["token_type_ids"])
        np.testing.assert_array_equal(packed["padding_mask"],
                                      expected["attention_mask"])


def test_masked_lm_preprocessor_never_masks_specials(albert_tokenizer):
    preprocessor = kzoo.AlbertMaskedLMPreprocessor(
        albert_tokenizer, sequence_length=24, mask_selection_rate=0.5)
    texts = ["It is a truth universally acknowledged, that a single man"] * 8
    x, y, weights = to_numpy(preprocessor(texts))
    clean = to_numpy(kzoo.AlbertPreprocessor(
        albert_tokenizer, sequence_length=24)(texts))["token_ids"]
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    real = weights > 0
    assert real.any()
    np.testing.assert_array_equal(selected[real], y[real])
    assert not np.isin(y[real], list(range(5))).any()
    assert (x["token_ids"] == SPECIAL_IDS["[MASK]"]).any()
