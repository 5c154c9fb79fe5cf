"""RobertaTokenizer and RobertaPreprocessor against transformers'
RobertaTokenizer built from the same files (GPT-2's real merges, a
RoBERTa-format vocab.json), on hard strings, eagerly and in tf.data."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from roberta_testing import HARD_TEXTS as HARD, MASK_ID, ROBERTA_PRESET
from helpers import id_lists, to_numpy

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")

PAIRS = (["The first text.", "短い", "x" * 40],
         ["and the second one", "🙂 <mask> ok", "y y y y y y y y"])


@pytest.fixture(scope="module")
def reference():
    """transformers' tokenizer of the same files, `<mask>` declared as in
    FacebookAI/roberta-base's tokenizer.json (lstrip)."""
    from tokenizers import AddedToken
    transformers.logging.set_verbosity_error()
    return transformers.RobertaTokenizer(
        f"{ROBERTA_PRESET}/vocab.json", f"{ROBERTA_PRESET}/merges.txt",
        mask_token=AddedToken("<mask>", lstrip=True, rstrip=False,
                              normalized=False))


def test_hard_strings_eager(roberta_tokenizer, reference):
    for text in HARD:
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert id_lists(roberta_tokenizer([text]))[0] == expected, text
        assert roberta_tokenizer.detokenize(expected) == reference.decode(
            expected), text


def test_hard_strings_in_tf_data(roberta_tokenizer, reference):
    dataset = tf.data.Dataset.from_tensor_slices(HARD).batch(len(HARD))
    ids = next(iter(dataset.map(roberta_tokenizer)))
    assert id_lists(ids) == [
        reference(t, add_special_tokens=False)["input_ids"] for t in HARD]


def test_special_ids_are_fairseq_ones(roberta_tokenizer):
    t = roberta_tokenizer
    assert (t.start_token_id, t.pad_token_id, t.end_token_id,
            t.unk_token_id, t.mask_token_id) == (0, 1, 2, 3, MASK_ID)
    assert t.cls_token_id == 0 and t.sep_token_id == 2
    assert sorted(t.special_token_ids) == [0, 1, 2, 3, MASK_ID]


@pytest.mark.parametrize("truncated", [False, True])
def test_packing_matches_transformers(roberta_tokenizer, reference,
                                      truncated):
    length = 12 if truncated else 40
    preprocessor = kzoo.RobertaPreprocessor(roberta_tokenizer,
                                            sequence_length=length)
    for x, (a, b) in ((PAIRS[0], (PAIRS[0], None)), (PAIRS, PAIRS)):
        packed = to_numpy(preprocessor(x))
        assert sorted(packed) == ["padding_mask", "token_ids"]
        expected = reference(
            list(a), None if b is None else list(b), padding="max_length",
            truncation="longest_first", max_length=length)
        np.testing.assert_array_equal(packed["token_ids"],
                                      expected["input_ids"])
        np.testing.assert_array_equal(packed["padding_mask"],
                                      expected["attention_mask"])


def test_pair_layout(roberta_tokenizer):
    preprocessor = kzoo.RobertaPreprocessor(roberta_tokenizer,
                                            sequence_length=10)
    a, b = (id_lists(roberta_tokenizer([t]))[0] for t in ("Hi", "there"))
    row = to_numpy(preprocessor((["Hi"], ["there"])))["token_ids"][0]
    assert row.tolist() == [0, *a, 2, 2, *b, 2] + [1] * (6 - len(a + b))
    with pytest.raises(ValueError, match="sequence_length >= 4"):
        kzoo.RobertaPreprocessor(roberta_tokenizer, sequence_length=3)(
            (["a"], ["b"]))


def test_masked_lm_preprocessor_never_masks_specials(roberta_tokenizer):
    preprocessor = kzoo.RobertaMaskedLMPreprocessor(
        roberta_tokenizer, sequence_length=24, mask_selection_rate=0.5)
    texts = ["It is a truth universally acknowledged, that a single man"] * 8
    x, y, weights = to_numpy(preprocessor(texts))
    clean = to_numpy(kzoo.RobertaPreprocessor(
        roberta_tokenizer, sequence_length=24)(texts))["token_ids"]
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    real = weights > 0
    assert real.any()
    np.testing.assert_array_equal(selected[real], y[real])
    assert not np.isin(y[real], [0, 1, 2, 3, MASK_ID]).any()
    assert (x["token_ids"] == MASK_ID).any()
