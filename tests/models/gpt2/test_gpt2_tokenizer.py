"""GPT2Tokenizer and the GPT-2 preprocessors, with the real vocabulary."""

import gc
import weakref
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import golden_cases, id_lists, to_numpy

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

GOLDEN = "ggml-vocab-gpt-2.gguf"
END = 50256


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.GPT2Tokenizer.from_preset("gpt2")


def test_golden_cases_eager(tokenizer):
    cases = golden_cases(GOLDEN)
    assert len(cases) == 46
    for i, (text, expected) in enumerate(cases):
        assert id_lists(tokenizer(text)) == expected, (i, text)
        assert tokenizer.detokenize(expected) == text, (i, text)


def test_golden_cases_in_tf_data(tokenizer):
    # Inside tf.data kzoo's TensorFlow graph runs, not the eager path
    # (the `tokenizers` library): both must give the reference ids.
    texts, expected = zip(*golden_cases(GOLDEN))
    dataset = tf.data.Dataset.from_tensor_slices(list(texts)).batch(46)
    ids = next(iter(dataset.map(tokenizer)))
    assert id_lists(ids) == list(expected)
    ragged = tf.ragged.constant(list(expected), dtype="int32")
    dataset = tf.data.Dataset.from_tensor_slices(ragged).batch(46)
    decoded = next(iter(dataset.map(tokenizer.detokenize))).numpy()
    assert [d.decode("utf-8") for d in decoded] == list(texts)


def test_pipelines_share_one_trace(tmp_path):
    # The BPE graph is traced once: every pipeline after the first
    # (one string per element, or batches), and every tokenizer built from
    # the same files, reuses it, with the same ids.
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    texts = ["Hello world", "It is a truth", "a\x00b<|endoftext|>"]
    eager = [id_lists(tokenizer(t)) for t in texts]

    def through_tf_data(tokenizer, batch):
        dataset = tf.data.Dataset.from_tensor_slices(texts)
        if batch:
            dataset = dataset.batch(batch)
        ids = [id_lists(x) for x in dataset.map(tokenizer)]
        return ids if not batch else sum(ids, [])

    for batch in (None, 2, 3):
        assert through_tf_data(tokenizer, batch) == eager
    traced = tokenizer.traced_tokenize_tf()
    assert traced.experimental_get_tracing_count() == 1

    def second_tokenizer():
        same_files = kzoo.GPT2Tokenizer.from_preset("gpt2")
        assert through_tf_data(same_files, 2) == eager
        assert same_files.traced_tokenize_tf() is traced
        return weakref.ref(same_files)

    gone = second_tokenizer()
    assert traced.experimental_get_tracing_count() == 1
    # The shared trace keeps no tokenizer alive.
    gc.collect()
    assert gone() is None
    # Other files (one merge rule fewer): another trace.
    merges = tmp_path / "merges.txt"
    merges.write_text("\n".join(Path(tokenizer.merges).read_text(
        encoding="utf-8").splitlines()[:-1]) + "\n", encoding="utf-8")
    other = kzoo.GPT2Tokenizer(vocabulary=tokenizer.vocabulary,
                               merges=str(merges))
    assert other.traced_tokenize_tf() is not traced
    assert tokenizer.traced_tokenize_tf() is traced


def test_vocabulary_and_special_token(tokenizer):
    assert tokenizer.vocabulary_size == 50257
    assert tokenizer.end_token_id == tokenizer.pad_token_id == END
    assert id_lists(tokenizer("Hello world")) == [15496, 995]
    # A literal <|endoftext|> is the special token, never split.
    assert id_lists(tokenizer("a<|endoftext|>b")) == [64, END, 65]


def test_presets_share_one_vocabulary(tokenizer, tmp_path):
    medium = kzoo.GPT2Tokenizer.from_preset("gpt2_medium_en")
    assert medium.vocabulary == tokenizer.vocabulary  # the base's file
    medium.save_to_preset(tmp_path)  # a saved preset gets its own copies
    for name in ("vocab.json", "merges.txt"):
        assert (tmp_path / name).read_bytes() == \
            (kzoo.presets.resolve("gpt2").path / name).read_bytes()
    import json
    entry = json.loads((tmp_path / "tokenizer.json").read_text())
    assert "assets_from" not in entry
    copy = kzoo.GPT2Tokenizer(tmp_path / "vocab.json", tmp_path / "merges.txt")
    assert id_lists(copy("It is a truth")) == id_lists(tokenizer("It is a truth"))


def test_causal_lm_preprocessor(tokenizer):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer, sequence_length=8)
    x, y, weights = to_numpy(preprocessor(["Hello world", "a b c d e f g h i"]))
    ids = x["token_ids"]
    assert ids.shape == y.shape == weights.shape == (2, 8)
    # <|endoftext|> Hello world <|endoftext|>, then padding.
    assert ids[0, :4].tolist() == [END, 15496, 995, END]
    assert x["padding_mask"][0].tolist() == [1] * 4 + [0] * 4
    # Labels are the inputs shifted by one; padding carries no weight.
    assert y[0, :3].tolist() == [15496, 995, END]
    assert weights[0].tolist() == [1] * 3 + [0] * 5
    # A long text is truncated and every label counts.
    assert weights[1].tolist() == [1] * 8
    np.testing.assert_array_equal(y[1, :-1], ids[1, 1:])


def test_causal_lm_preprocessor_in_tf_data(tokenizer):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer, sequence_length=8)
    texts = ["Hello world", "a b c d e f g h i"]
    eager = to_numpy(preprocessor(texts))
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(2)
    graph = to_numpy(next(iter(dataset.map(preprocessor))))
    for a, b in zip(keras_flatten(eager), keras_flatten(graph)):
        np.testing.assert_array_equal(a, b)


def keras_flatten(structure):
    import keras
    return keras.tree.flatten(structure)


def test_generate_pre_and_postprocess(tokenizer):
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer)
    # The prompt alone, as transformers' tokenizer and OpenAI's
    # conditional sampler encode it; the start token only when asked.
    ids = preprocessor.generate_preprocess(["Hello world", "Hi"])
    assert ids == [[15496, 995], [17250]]
    started = kzoo.GPT2CausalLMPreprocessor(tokenizer,
                                            prompt_start_token=True)
    ids = started.generate_preprocess(["Hello world", "Hi"])
    assert ids == [[END, 15496, 995], [END, 17250]]
    texts = preprocessor.generate_postprocess(
        [[END, 15496, 995, END], [END, 17250]], stop_token_ids=[END])
    assert texts == ["Hello world", "Hi"]


def test_classifier_preprocessor_pairs(tokenizer):
    preprocessor = kzoo.GPT2Preprocessor(tokenizer, sequence_length=6)
    x = to_numpy(preprocessor((["Hello world"], ["Hi"])))
    # text_a <|endoftext|> text_b, no extract token by default.
    assert x["token_ids"][0].tolist() == [15496, 995, END, 17250, END, END]
    assert x["padding_mask"][0].tolist() == [1, 1, 1, 1, 0, 0]
    single = to_numpy(kzoo.GPT2Preprocessor(
        tokenizer, sequence_length=4, add_end_token=True)(["a b c d e",
                                                           "a b"]))
    # A text cut at sequence_length did not end there: no end token.
    assert single["token_ids"][0].tolist() == [64, 275, 269, 288]
    assert single["padding_mask"][0].tolist() == [1, 1, 1, 1]
    assert single["token_ids"][1].tolist() == [64, 275, END, END]
    assert single["padding_mask"][1].tolist() == [1, 1, 1, 0]
