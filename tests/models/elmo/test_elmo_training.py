"""Training is real: tiny ELMos learn from real text (Jane Austen), from
random weights."""

import collections

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
import kzoo.datasets
from elmo_testing import TINY_ELMO
from helpers import AUSTEN_NOVELS, austen_passages, to_numpy

SMALL = {**TINY_ELMO, "projection_dim": 16, "lstm_dim": 32,
         "filters": [[1, 16], [2, 16], [3, 32]]}


def austen_vocabulary(texts, path, size=300):
    """The corpus's most frequent words, with ELMo's special tokens."""
    counts = collections.Counter(w for t in texts for w in t.split())
    words = ["<S>", "</S>", "<UNK>"] + [w for w, _ in
                                        counts.most_common(size)]
    path.write_text("\n".join(words) + "\n", encoding="utf-8")
    return path


def bilm_on_austen(tmp_path, **language_model_arguments):
    """A small biLM on 64 Austen passages and its 303-word vocabulary, with
    the texts to train it on."""
    texts = austen_passages(AUSTEN_NOVELS[0], words=16)[:64]
    tokenizer = kzoo.ElmoTokenizer(
        vocabulary=austen_vocabulary(texts, tmp_path / "vocab.txt"))
    task = kzoo.ElmoLanguageModel(
        kzoo.ElmoBackbone(**SMALL),
        preprocessor=kzoo.ElmoLanguageModelPreprocessor(tokenizer,
                                                        sequence_length=18),
        **language_model_arguments)
    task.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2))
    return task, texts


def train_and_check_perplexity(task, texts, epochs=4):
    """Both directions' (full-softmax) perplexity must start near uniform
    over the 303 words and at least halve. Returns the fit history."""
    before = task.evaluate(texts, batch_size=32, verbose=0, return_dict=True)
    history = task.fit(texts, batch_size=16, epochs=epochs, verbose=0).history
    after = task.evaluate(texts, batch_size=32, verbose=0, return_dict=True)
    for direction in ("forward", "backward"):
        key = f"{direction}_perplexity"
        assert before[key] > 200, before
        assert after[key] < 0.5 * before[key], (before, after)
    return history


@pytest.mark.convergence
def test_bilm_perplexity_falls_on_austen(tmp_path):
    train_and_check_perplexity(*bilm_on_austen(tmp_path))


@pytest.mark.convergence
def test_bilm_trains_with_a_sampled_softmax(tmp_path):
    # The original's way for large vocabularies: 64 of the 303 words
    # scored per step; evaluation still uses the full softmax. It learns
    # more slowly: after 4 epochs the perplexity ratio was 0.46-0.51 over
    # seeds on torch (CI failed once at 0.501), after 7 it is 0.40-0.42.
    task, texts = bilm_on_austen(tmp_path, num_sampled=64, seed=0)
    state = to_numpy(task.candidate_sampler.seed_generator.state)
    history = train_and_check_perplexity(task, texts, epochs=7)
    assert all(np.isfinite(history["loss"])), history
    # A new draw at every step (the state advances once per step).
    assert not np.array_equal(
        to_numpy(task.candidate_sampler.seed_generator.state), state)


@pytest.mark.convergence
def test_elmo_features_classify_held_out_text():
    # Is a paragraph's opening speech or narration (quotation marks taken
    # out)? Balanced classes (majority baseline 50%); 150 passages a class
    # to learn from, 100 a class held out.
    # (An earlier version asked which of two novels a passage came from:
    # a randomly started ELMo this small memorises its training set there
    # and scores 0.55-0.70 held out, by seed and machine — too weak a
    # signal for a test. Speech vs narration: 0.92-0.95 over seeds.)
    keras.utils.set_random_seed(0)
    (train, labels), (test, test_labels) = kzoo.datasets.austen_speech(
        per_class=150, test_per_class=100)
    tokenizer = kzoo.ElmoTokenizer(vocabulary=_any_vocabulary())
    task = kzoo.ElmoTextClassifier(
        kzoo.ElmoBackbone(**SMALL), num_classes=2, pooling="max",
        preprocessor=kzoo.ElmoPreprocessor(tokenizer, sequence_length=18))
    task.compile(optimizer=keras.optimizers.Adam(learning_rate=1e-2),
                 loss=keras.losses.SparseCategoricalCrossentropy(
                     from_logits=True), metrics=["accuracy"])
    dataset = tf.data.Dataset.from_tensor_slices((train, labels)).shuffle(
        len(train), seed=0).batch(16)
    task.fit(dataset, epochs=6, verbose=0)
    predicted = np.argmax(to_numpy(task.predict(test, batch_size=32,
                                                verbose=0)), -1)
    accuracy = np.mean(predicted == test_labels)
    print(f"\nheld-out accuracy {accuracy:.2f} (majority 0.50)")
    assert accuracy >= 0.75, accuracy


def _any_vocabulary():
    from elmo_testing import VOCABULARY
    return VOCABULARY  # characters only: the vocabulary is never read
