"""XLMRobertaTokenizer and XLMRobertaPreprocessor against transformers'
XLMRobertaTokenizer built from the same SentencePiece model, on hard
strings (accents, CJK, emoji, whitespace runs, special tokens typed in the
text), eagerly and in tf.data; fairseq's numbering; the word-start table."""

import numpy as np
import pytest
import sentencepiece
import tensorflow as tf
from sentencepiece import sentencepiece_model_pb2

import kzoo
from helpers import id_lists, to_numpy
from kzoo.core.tokenizer import TokenizerAssetError
from xlm_roberta_testing import HARD_TEXTS as HARD, MASK_ID, SPM_MODEL

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

PAIRS = (["The first text.", "短い", "x" * 40],
         ["and the second one", "🙂 <mask> ok", "y y y y y y y y"])


def test_hard_strings_eager(xlmr_tokenizer, reference):
    for text in HARD:
        expected = reference(text, add_special_tokens=False)["input_ids"]
        assert id_lists(xlmr_tokenizer([text]))[0] == expected, text


def test_hard_strings_in_tf_data(xlmr_tokenizer, reference):
    dataset = tf.data.Dataset.from_tensor_slices(HARD).batch(len(HARD))
    ids = next(iter(dataset.map(xlmr_tokenizer)))
    assert id_lists(ids) == [
        reference(t, add_special_tokens=False)["input_ids"] for t in HARD]


def test_fairseq_numbering(xlmr_tokenizer, reference):
    t = xlmr_tokenizer
    assert (t.start_token_id, t.pad_token_id, t.end_token_id,
            t.unk_token_id, t.mask_token_id) == (0, 1, 2, 3, MASK_ID)
    assert t.cls_token_id == 0 and t.sep_token_id == 2
    assert sorted(t.special_token_ids) == [0, 1, 2, 3, MASK_ID]
    assert t.get_vocabulary() == reference.convert_ids_to_tokens(
        list(range(len(reference))))
    # Piece i of the model is id i + 1; its <unk>, <s>, </s> are fairseq's.
    model = sentencepiece.SentencePieceProcessor(model_file=str(SPM_MODEL))
    assert model.id_to_piece(3) == "\r" and t.token_to_id("\r") == 4
    assert [t.token_to_id(model.id_to_piece(i)) for i in range(3)] == [3, 0, 2]
    text = "I was born in Tokyo"
    assert t([text])[0] == [i + 1 for i in model.encode(text)]


def test_detokenize(xlmr_tokenizer, reference):
    for text in ["Hello world", "The <mask> sat on the mat.",
                 "It is a truth universally acknowledged, that a single man",
                 "<s>typed</s> specials"]:
        ids = reference(text, add_special_tokens=False)["input_ids"]
        # Special tokens are no text (transformers' skip_special_tokens).
        assert xlmr_tokenizer.detokenize(ids) == reference.decode(
            ids, skip_special_tokens=True), text


def test_word_start_table(xlmr_tokenizer):
    table = xlmr_tokenizer.word_start_table()
    vocabulary = xlmr_tokenizer.get_vocabulary()
    assert table.dtype == bool and table.shape == (1002,)
    assert table[[0, 1, 2, 3, MASK_ID]].all()  # every special token
    for token, start in zip(vocabulary[4:MASK_ID], table[4:MASK_ID]):
        assert start == token.startswith("\u2581"), token
    ids = xlmr_tokenizer(["Hello wonderful world"])[0]
    assert table[ids].sum() == 3  # three words


def test_other_sentencepiece_models_are_refused(tmp_path):
    proto = sentencepiece_model_pb2.ModelProto()
    proto.ParseFromString(SPM_MODEL.read_bytes())
    proto.pieces[1].piece = "[CLS]"  # ALBERT-like, not XLM-R's <s>
    bad = tmp_path / "sentencepiece.bpe.model"
    bad.write_bytes(proto.SerializeToString())
    with pytest.raises(TokenizerAssetError, match=(
            r"first pieces are \['<unk>', '\[CLS\]', '</s>'\]; XLM-R's "
            r"SentencePiece model starts with \['<unk>', '<s>', '</s>'\]")):
        kzoo.XLMRobertaTokenizer(bad)


@pytest.mark.parametrize("truncated", [False, True])
def test_packing_matches_transformers(xlmr_tokenizer, reference, truncated):
    length = 12 if truncated else 40
    preprocessor = kzoo.XLMRobertaPreprocessor(xlmr_tokenizer,
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


def test_masked_lm_preprocessor_never_masks_specials(xlmr_tokenizer):
    preprocessor = kzoo.XLMRobertaMaskedLMPreprocessor(
        xlmr_tokenizer, sequence_length=24, mask_selection_rate=0.5)
    texts = ["It is a truth universally acknowledged, that a single man"] * 8
    x, y, weights = to_numpy(preprocessor(texts))
    clean = to_numpy(kzoo.XLMRobertaPreprocessor(
        xlmr_tokenizer, sequence_length=24)(texts))["token_ids"]
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    real = weights > 0
    assert real.any()
    np.testing.assert_array_equal(selected[real], y[real])
    assert not np.isin(y[real], [0, 1, 2, 3, MASK_ID]).any()
    assert (x["token_ids"] == MASK_ID).any()
