"""BertTokenizer against Hugging Face's ids (llama.cpp golden vectors)."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import BERT_SPECIAL_IDS, golden_cases, id_lists

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

GOLDEN = golden_cases("ggml-vocab-bert-bge.gguf")


def test_golden_file_has_46_cases():
    assert len(GOLDEN) == 46
    assert GOLDEN[2] == ("", [])  # the empty case is a case too


@pytest.mark.parametrize("case", range(len(GOLDEN)))
def test_golden_case_eager(bert_tokenizer, case):
    text, expected = GOLDEN[case]
    assert id_lists(bert_tokenizer.tokenize([text])) == [expected], repr(text)


def test_golden_cases_in_tf_data(bert_tokenizer):
    # Inside tf.data keras-hub takes its TensorFlow path, not the Python
    # one that eager calls take: both must agree with Hugging Face.
    texts = [text for text, _ in GOLDEN]
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(len(texts))
    token_ids = next(iter(dataset.map(bert_tokenizer)))
    assert id_lists(token_ids) == [ids for _, ids in GOLDEN]


def test_tokenize_adds_no_special_tokens(bert_tokenizer):
    assert id_lists(bert_tokenizer(["hello world"])) == [[7592, 2088]]
    assert id_lists(bert_tokenizer("hello world")) == [7592, 2088]


def test_normalisation_matches_bert(bert_tokenizer):
    tokenize = lambda text: id_lists(bert_tokenizer([text]))[0]  # noqa: E731
    # Accents stripped (NFD), case folded, compatibility characters kept.
    assert tokenize("Héllo WORLD") == tokenize("hello world")
    assert tokenize("½") == [1092]
    # Control/format characters vanish without splitting the word.
    assert tokenize("hel\u200blo") == tokenize("hello")
    assert tokenize("a\x00b") == tokenize("ab")
    # Any Unicode space separates words.
    assert tokenize("hello\u00a0world\u3000again") == \
        tokenize("hello world again")


def test_special_token_ids(bert_tokenizer):
    tokenizer = bert_tokenizer
    assert tokenizer.vocabulary_size == 30522
    assert tokenizer.pad_token_id == BERT_SPECIAL_IDS["[PAD]"]
    assert tokenizer.unk_token_id == BERT_SPECIAL_IDS["[UNK]"]
    assert tokenizer.cls_token_id == BERT_SPECIAL_IDS["[CLS]"]
    assert tokenizer.sep_token_id == BERT_SPECIAL_IDS["[SEP]"]
    assert tokenizer.mask_token_id == BERT_SPECIAL_IDS["[MASK]"]
    for token, token_id in BERT_SPECIAL_IDS.items():
        assert tokenizer.token_to_id(token) == token_id
        assert tokenizer.id_to_token(token_id) == token
    assert sorted(tokenizer.special_token_ids) == \
        sorted(BERT_SPECIAL_IDS.values())


def test_special_tokens_typed_in_text(bert_tokenizer):
    ids = id_lists(bert_tokenizer(["Paris is the [MASK] of France."]))[0]
    assert ids.count(103) == 1
    # Only the exact spelling is special, as in Hugging Face.
    assert 103 not in id_lists(bert_tokenizer(["the [mask] token"]))[0]


def test_unknown_word_is_unk(bert_tokenizer):
    assert id_lists(bert_tokenizer(["\U0001F680"])) == [[100]]


def test_detokenize(bert_tokenizer):
    ids = bert_tokenizer(["The quick brown fox jumped."])
    text = bert_tokenizer.detokenize(ids)
    text = np.asarray(text).reshape(-1)[0]
    text = text.decode() if isinstance(text, bytes) else str(text)
    assert text == "the quick brown fox jumped ."
    # Word pieces are glued back together.
    pieces = id_lists(bert_tokenizer(["unaffable"]))[0]
    assert len(pieces) > 1
    joined = np.asarray(bert_tokenizer.detokenize([pieces])).reshape(-1)[0]
    joined = joined.decode() if isinstance(joined, bytes) else str(joined)
    assert joined == "unaffable"


def test_vocabulary_lacking_special_tokens_is_refused(tmp_path):
    vocab = tmp_path / "vocab.txt"
    vocab.write_text("[PAD]\n[UNK]\nhello\n")
    with pytest.raises(ValueError, match=r"\[CLS\]"):
        kzoo.BertTokenizer(str(vocab))
