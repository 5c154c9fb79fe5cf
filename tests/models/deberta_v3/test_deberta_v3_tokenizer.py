"""DebertaV3Tokenizer and DebertaV3Preprocessor against transformers'
DebertaV2Tokenizer built from the same SentencePiece model (the stand-in
preset's, sentencepiece's Botchan test model), on hard strings, eagerly
and in tf.data; compatibility characters as the model's own
normaliser treats them."""

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf

import kzoo
from deberta_v3_testing import (CLS_ID, DEBERTA_PRESET, HARD_TEXTS as HARD,
                                MASK_ID, PAD_ID, SEP_ID, SPM_MODEL, UNK_ID,
                                VOCABULARY)
from helpers import id_lists, to_numpy

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

transformers = pytest.importorskip("transformers")

PAIRS = (["The first text.", "短い", "x" * 40],
         ["and the second one", "🙂 [MASK] ok", "y y y y y y y y"])


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.DebertaV3Tokenizer.from_preset(DEBERTA_PRESET)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    transformers.logging.set_verbosity_error()
    folder = tmp_path_factory.mktemp("hf_deberta_tokenizer")
    (folder / "spm.model").write_bytes(SPM_MODEL.read_bytes())
    return transformers.DebertaV2Tokenizer.from_pretrained(folder)


def test_hard_strings_eager(tokenizer, reference):
    for text in HARD:
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert id_lists(tokenizer([text]))[0] == expected, text


def test_hard_strings_in_tf_data(tokenizer, reference):
    dataset = tf.data.Dataset.from_tensor_slices(HARD).batch(len(HARD))
    ids = next(iter(dataset.map(tokenizer)))
    assert id_lists(ids) == [
        reference(t, add_special_tokens=False)["input_ids"] for t in HARD]


def test_compatibility_characters_follow_the_model():
    # The SentencePiece model's own normaliser (nmt_nfkc) folds ligatures,
    # full-width letters and no-break spaces, as the original DeBERTa
    # tokenizer (sentencepiece) does; transformers 5's DebertaV2Tokenizer
    # skips it and gives <unk>, so the reference here is sentencepiece.
    tokenizer = kzoo.DebertaV3Tokenizer(str(SPM_MODEL))
    model = sentencepiece.SentencePieceProcessor(model_file=str(SPM_MODEL))
    text = "ﬁne ligature ＡＢＣ full\u00a0width"
    assert id_lists(tokenizer([text]))[0] == model.encode(text)
    assert tokenizer.detokenize(model.encode(text)) == "fine ligature ABC " \
        "full width"


def test_special_ids(tokenizer, reference):
    t = tokenizer
    assert t.vocabulary_size == VOCABULARY == len(reference)
    assert (t.cls_token_id, t.sep_token_id, t.unk_token_id, t.pad_token_id,
            t.mask_token_id) == (CLS_ID, SEP_ID, UNK_ID, PAD_ID, MASK_ID)
    assert (reference.cls_token_id, reference.sep_token_id,
            reference.unk_token_id, reference.pad_token_id,
            reference.mask_token_id) == (CLS_ID, SEP_ID, UNK_ID, PAD_ID,
                                         MASK_ID)
    assert sorted(t.special_token_ids) == [CLS_ID, SEP_ID, UNK_ID, PAD_ID,
                                           MASK_ID]


def test_real_layout_keeps_the_model_ids(tmp_path):
    # A model with DeBERTa-v3's own layout ([PAD] [CLS] [SEP] [UNK] as
    # pieces 0-3) keeps those ids and puts [MASK] right after the pieces.
    sentencepiece.SentencePieceTrainer.train(
        sentence_iterator=iter(["the cat sat on the mat"] * 50 +
                               ["a dog ran in the park"] * 50),
        model_prefix=str(tmp_path / "spm"), vocab_size=20,
        pad_id=0, bos_id=1, eos_id=2, unk_id=3, pad_piece="[PAD]",
        bos_piece="[CLS]", eos_piece="[SEP]", unk_piece="[UNK]",
        minloglevel=2)
    t = kzoo.DebertaV3Tokenizer(str(tmp_path / "spm.model"))
    assert (t.pad_token_id, t.cls_token_id, t.sep_token_id, t.unk_token_id,
            t.mask_token_id) == (0, 1, 2, 3, 20)
    assert 20 in id_lists(t(["the [MASK] sat"]))[0]


@pytest.mark.parametrize("truncated", [False, True])
def test_packing_matches_transformers(tokenizer, reference, truncated):
    length = 12 if truncated else 40
    preprocessor = kzoo.DebertaV3Preprocessor(tokenizer,
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


def test_masked_lm_preprocessor_never_masks_specials(tokenizer):
    preprocessor = kzoo.DebertaV3MaskedLMPreprocessor(
        tokenizer, sequence_length=24, mask_selection_rate=0.5)
    texts = ["It is a truth universally acknowledged, that a single man"] * 8
    x, y, weights = to_numpy(preprocessor(texts))
    clean = to_numpy(kzoo.DebertaV3Preprocessor(
        tokenizer, sequence_length=24)(texts))["token_ids"]
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    real = weights > 0
    assert real.any()
    np.testing.assert_array_equal(selected[real], y[real])
    assert not np.isin(y[real], [CLS_ID, SEP_ID, UNK_ID, PAD_ID,
                                 MASK_ID]).any()
    assert (x["token_ids"] == MASK_ID).any()
