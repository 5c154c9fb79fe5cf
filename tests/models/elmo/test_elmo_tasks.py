"""ELMo's text side and tasks: character ids as the original's, the
preprocessor's packing, the embedder's mixes, the classifier and the
language model through the shared task checks."""

import numpy as np
import pytest

import kzoo
from elmo_testing import TINY_ELMO, VOCABULARY
from helpers import check_task, to_numpy
from kzoo.models.elmo.characters import word_character_ids

TEXTS = ["It is a truth universally acknowledged", "Why care",
         "Ünïcödé words", "the flu is bad news"]


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.ElmoTokenizer(vocabulary=VOCABULARY)


def test_character_ids_are_the_originals():
    # bytes + 1; begin-of-word 259, end-of-word 260, padding 261; <S> and
    # </S> are begin-of-word, 257 / 258, end-of-word.
    ids = word_character_ids("Hi")
    assert ids[:5].tolist() == [259, 73, 106, 260, 261]
    assert ids.shape == (50,) and np.all(ids[4:] == 261)
    assert word_character_ids("<S>")[:4].tolist() == [259, 257, 260, 261]
    assert word_character_ids("</S>")[:4].tolist() == [259, 258, 260, 261]
    long = word_character_ids("é" * 30)  # 60 bytes: cut at 48
    assert long[48] == 0xA9 + 1 and long[49] == 260


def test_tokenizer_words_and_characters(tokenizer):
    assert tokenizer(["good Why xyzzy"]) == [[0, 1, tokenizer.unk_token_id]]
    assert tokenizer.detokenize([[0, 1]]) == ["good Why"]
    chars = np.asarray(tokenizer.character_ids(["Hi there", "Hi"]))
    assert chars.shape == (2, 2, 50)
    np.testing.assert_array_equal(chars[0, 0], word_character_ids("Hi"))
    assert np.all(chars[1, 1] == 0)  # a padding token


def test_preprocessor_packs_sentence_boundaries(tokenizer):
    preprocessor = kzoo.ElmoPreprocessor(tokenizer, sequence_length=5)
    x = to_numpy(preprocessor(["one two", "a b c d e f"]))
    np.testing.assert_array_equal(x["padding_mask"],
                                  [[1, 1, 1, 1, 0], [1, 1, 1, 1, 1]])
    for row, words in enumerate([["one", "two"], ["a", "b", "c"]]):
        tokens = ["<S>"] + words + ["</S>"]
        for j, word in enumerate(tokens):
            np.testing.assert_array_equal(x["character_ids"][row, j],
                                          word_character_ids(word))
    assert np.all(x["character_ids"][0, 4] == 0)


def test_language_model_targets(tokenizer):
    preprocessor = kzoo.ElmoLanguageModelPreprocessor(tokenizer,
                                                      sequence_length=5)
    _, y, weights = to_numpy(preprocessor(["good Why"]))
    s, e = tokenizer.bos_token_id, tokenizer.eos_token_id
    np.testing.assert_array_equal(y["forward"][0], [0, 1, e, 0, 0])
    np.testing.assert_array_equal(weights["forward"][0], [1, 1, 1, 0, 0])
    np.testing.assert_array_equal(y["backward"][0], [0, s, 0, 1, 0])
    np.testing.assert_array_equal(weights["backward"][0], [0, 1, 1, 1, 0])


def test_embedder_mixes_and_strips_boundaries(tokenizer):
    backbone = kzoo.ElmoBackbone(**TINY_ELMO)
    embedder = kzoo.ElmoEmbedder(
        backbone, kzoo.ElmoPreprocessor(tokenizer, sequence_length=10),
        num_mixes=2)
    vectors = embedder.embed(TEXTS)
    assert [v.shape for v in vectors] == [(6, 12), (2, 12), (2, 12), (5, 12)]
    # A fresh mix is the even average of the three layers.
    layers = to_numpy(backbone(embedder.preprocessor(TEXTS[:1])))
    expected = layers["layer_outputs"][0].mean(1)[1:7]
    np.testing.assert_allclose(vectors[0], expected, atol=1e-6)
    out = to_numpy(embedder.predict(TEXTS, verbose=0))
    assert out.shape == (4, 10, 2, 12)


def test_classifier_task(tokenizer, tmp_path):
    task = kzoo.ElmoTextClassifier(
        kzoo.ElmoBackbone(**TINY_ELMO), num_classes=3, pooling="max",
        preprocessor=kzoo.ElmoPreprocessor(tokenizer, sequence_length=10))
    check_task(task, TEXTS, np.array([0, 1, 2, 1]), tmp_path)


def test_language_model_task(tokenizer, tmp_path):
    task = kzoo.ElmoLanguageModel(
        kzoo.ElmoBackbone(**TINY_ELMO),
        preprocessor=kzoo.ElmoLanguageModelPreprocessor(tokenizer,
                                                        sequence_length=10))
    assert task.vocabulary_size == 458
    history, predictions = check_task(task, TEXTS, tmp_path=tmp_path)
    assert predictions["forward"].shape == (4, 10, 458)
    assert "forward_perplexity" in history.history
