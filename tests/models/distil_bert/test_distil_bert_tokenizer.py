"""DistilBertTokenizer and DistilBertPreprocessor against transformers'
DistilBertTokenizer on the same vocab.txt, on hard strings, eagerly and
in tf.data."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from distil_bert_testing import HARD_TEXTS as HARD, PRESET
from helpers import id_lists, to_numpy

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")

PAIRS = (["The first text.", "短い", "x" * 40],
         ["and the second one", "🙂 [MASK] ok", "y y y y y y y y"])


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.DistilBertTokenizer.from_preset(PRESET)


@pytest.fixture(scope="module")
def reference(tokenizer):
    transformers.logging.set_verbosity_error()
    return transformers.DistilBertTokenizer(
        str(tokenizer.asset_paths["vocabulary"]), do_lower_case=True)


def test_is_bert_wordpiece(tokenizer):
    assert isinstance(tokenizer, kzoo.BertTokenizer)
    assert (tokenizer.pad_token_id, tokenizer.unk_token_id,
            tokenizer.cls_token_id, tokenizer.sep_token_id,
            tokenizer.mask_token_id) == (0, 100, 101, 102, 103)


def test_hard_strings_eager_and_in_tf_data(tokenizer, reference):
    expected = [reference(t, add_special_tokens=False)["input_ids"]
                for t in HARD]
    for text, ids in zip(HARD, expected):
        assert id_lists(tokenizer([text]))[0] == ids, text
    dataset = tf.data.Dataset.from_tensor_slices(HARD).batch(len(HARD))
    assert id_lists(next(iter(dataset.map(tokenizer)))) == expected


def test_cased_tokenizer_keeps_case(tokenizer):
    cased = kzoo.DistilBertTokenizer(
        str(tokenizer.asset_paths["vocabulary"]), lowercase=False)
    reference = transformers.DistilBertTokenizer(
        str(tokenizer.asset_paths["vocabulary"]), do_lower_case=False)
    for text in HARD:
        assert id_lists(cased([text]))[0] == reference(
            text, add_special_tokens=False)["input_ids"], text


@pytest.mark.parametrize("truncated", [False, True])
def test_packing_matches_transformers(tokenizer, reference, truncated):
    length = 10 if truncated else 40
    preprocessor = kzoo.DistilBertPreprocessor(tokenizer,
                                               sequence_length=length)
    cases = [(PAIRS[0], (PAIRS[0], None))]
    if not truncated:
        # Truncated pairs of equal length are trimmed on different sides
        # (keras-hub's round robin takes the second text first, HF's
        # longest_first the first): BERT's packer, tested in
        # tests/models/bert/test_bert_preprocessor.py.
        cases.append((PAIRS, PAIRS))
    for x, (a, b) in cases:
        packed = to_numpy(preprocessor(x))
        assert sorted(packed) == ["padding_mask", "token_ids"]
        expected = reference(
            list(a), None if b is None else list(b), padding="max_length",
            truncation="longest_first", max_length=length)
        assert "token_type_ids" not in expected
        np.testing.assert_array_equal(packed["token_ids"],
                                      expected["input_ids"])
        np.testing.assert_array_equal(packed["padding_mask"],
                                      expected["attention_mask"])


def test_masked_lm_preprocessor_never_masks_specials(tokenizer):
    preprocessor = kzoo.DistilBertMaskedLMPreprocessor(
        tokenizer, sequence_length=24, mask_selection_rate=0.5)
    texts = ["It is a truth universally acknowledged, that a single man"] * 8
    x, y, weights = to_numpy(preprocessor(texts))
    assert sorted(x) == ["mask_positions", "padding_mask", "token_ids"]
    clean = to_numpy(kzoo.DistilBertPreprocessor(
        tokenizer, sequence_length=24)(texts))["token_ids"]
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    real = weights > 0
    assert real.any()
    np.testing.assert_array_equal(selected[real], y[real])
    assert not np.isin(y[real], [0, 100, 101, 102, 103]).any()
    assert (x["token_ids"] == 103).any()
