"""T5Tokenizer against transformers' T5Tokenizer of the same (real)
SentencePiece model, and T5Preprocessor's packing."""

import numpy as np
import pytest

import kzoo
from roberta_testing import HARD_TEXTS as ROBERTA_HARD_TEXTS
from t5_testing import T5_PRESET, T5_VOCABULARY, hf_reference_tokenizer

HARD_TEXTS = ROBERTA_HARD_TEXTS + [
    "I was  born\r\nthere.\u2028Then\u00a0left",
    "ｆｕｌｌ　ｗｉｄｔｈ ＡＢＣ ①②",
    "e\u0301 vs \u00e9, \u200bzero\u200bwidth \ufeffbom",
    "summarize: <extra_id_0> a <extra_id_1>b<extra_id_99></s>",
    "<pad>x<unk> y </s> z",
    "  multiple   spaces\tand\nnewlines ",
    "It is a truth universally acknowledged, that a single man",
]


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.T5Tokenizer.from_preset(str(T5_PRESET))


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    pytest.importorskip("transformers")
    return hf_reference_tokenizer(tmp_path_factory.mktemp("hf_t5"))


@pytest.mark.once
def test_ids_equal_transformers(tokenizer, reference):
    assert tokenizer.vocabulary_size == len(reference) == T5_VOCABULARY
    for text in HARD_TEXTS:
        assert tokenizer([text])[0] == reference(
            text, add_special_tokens=False)["input_ids"], repr(text)


@pytest.mark.once
def test_special_ids_and_sentinel_order(tokenizer, reference):
    assert (tokenizer.pad_token_id, tokenizer.end_token_id,
            tokenizer.unk_token_id) == (0, 1, 2)
    # Descending: <extra_id_0> is the last id, <extra_id_99> the first.
    ids = [tokenizer.sentinel_id(i) for i in range(100)]
    assert ids == list(range(T5_VOCABULARY - 1, T5_VOCABULARY - 101, -1))
    assert ids == reference.convert_tokens_to_ids(
        [f"<extra_id_{i}>" for i in range(100)])
    with pytest.raises(ValueError, match="sentinels 0..99"):
        tokenizer.sentinel_id(100)


@pytest.mark.once
def test_a_model_of_another_layout_is_refused():
    with pytest.raises(ValueError, match="T5's SentencePiece model starts"):
        kzoo.T5Tokenizer("tests/data/spm/botchan_en_unigram_1000.model")


def test_preprocessor_packs_as_transformers(reference):
    preprocessor = kzoo.T5Preprocessor.from_preset(
        str(T5_PRESET), sequence_length=12, target_length=7)
    inputs = ["summarize: It is a truth universally acknowledged", "Hi"]
    targets = ["a truth", "Hello there my dear friend, hello"]
    x, y, weights = preprocessor((inputs, targets))
    expected = reference(inputs, padding="max_length", truncation=True,
                         max_length=12)
    np.testing.assert_array_equal(np.asarray(x["encoder_token_ids"]),
                                  expected["input_ids"])
    np.testing.assert_array_equal(np.asarray(x["encoder_padding_mask"]),
                                  expected["attention_mask"])
    labels = reference(text_target=targets, padding="max_length",
                       truncation=True, max_length=7)
    np.testing.assert_array_equal(np.asarray(y), labels["input_ids"])
    np.testing.assert_array_equal(np.asarray(weights),
                                  labels["attention_mask"])
    # The decoder reads the labels shifted right after <pad> (T5's start).
    decoder = np.asarray(x["decoder_token_ids"])
    np.testing.assert_array_equal(decoder[:, 0], [0, 0])
    np.testing.assert_array_equal(decoder[:, 1:], np.asarray(y)[:, :-1])
    assert np.asarray(x["decoder_padding_mask"]).tolist() == \
        [[1, 1, 1, 1, 1, 0, 0], [1] * 7]
