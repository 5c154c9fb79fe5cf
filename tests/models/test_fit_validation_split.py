"""`Task.fit(..., validation_split=f)` as Keras documents it, on every
backend (issue 31, item 7c): the last fraction `f` of the in-memory
examples (raw texts, word lists, input arrays) is held out before
shuffling and scored after every epoch, and kzoo's learning-rate schedule
(warmup, then linear decay to 0) spans the steps over the training part
only, so it reaches 0 at the last step. Before: the schedule was planned
over every example (on JAX and torch it stopped at 2/6 of the peak
here), and TensorFlow's tf.data path refused `validation_split`.

A `tf.data.Dataset` has no last fraction to slice: fit refuses it, as
Keras does, before anything changes."""

import math

import numpy as np
import pytest

import kzoo
from helpers import make_tiny_bert
from kzoo.training.schedules import planned_schedule_of

TEXTS = ["The sun was shining.", "It rained all day.", "A cold wind blew.",
         "The garden was in bloom.", "Snow fell at night.", "A warm day.",
         "Fog hid the hills.", "The river froze.", "Leaves turned gold.",
         "Hail beat on the roof."]
LABELS = np.array([0, 1, 1, 0, 1, 0, 1, 1, 0, 1])
SPLIT, BATCH, EPOCHS = 0.3, 4, 2
# Keras' rule: the first floor(n * (1 - split)) examples train.
TRAIN = int(math.floor(len(TEXTS) * (1 - SPLIT)))  # 7
PLANNED = math.ceil(TRAIN / BATCH) * EPOCHS  # 4


def bert_preprocessor():
    return kzoo.BertPreprocessor.from_preset("bert_tiny_en_uncased",
                                             sequence_length=12)


def classifier(preprocessor="auto"):
    if preprocessor == "auto":
        preprocessor = bert_preprocessor()
    return kzoo.BertTextClassifier(make_tiny_bert(), num_classes=2,
                                   preprocessor=preprocessor)


def check_schedule_ends_at_zero(task):
    schedule = planned_schedule_of(task.optimizer)
    assert schedule is not None  # the default optimizer's
    assert TRAIN == 7 and PLANNED == 4
    assert schedule.total_steps == PLANNED, schedule.total_steps
    steps = int(task.optimizer.iterations.numpy())
    assert steps == schedule.start_step + PLANNED
    # The rate falls to 0 exactly when the last step is done.
    assert float(schedule(steps)) == 0.0
    assert float(schedule(steps - 1)) > 0.0


def test_raw_texts_hold_out_the_last_fraction_and_plan_the_rest():
    task = classifier()
    history = task.fit(TEXTS, LABELS, batch_size=BATCH, epochs=EPOCHS,
                       validation_split=SPLIT, verbose=0).history
    check_schedule_ends_at_zero(task)
    assert len(history["val_loss"]) == EPOCHS
    assert len(history["val_accuracy"]) == EPOCHS
    # The held-out examples are the last 3, as Keras' validation_split:
    # the last epoch's validation is the trained model on them.
    loss, accuracy = task.evaluate(TEXTS[TRAIN:], LABELS[TRAIN:],
                                   batch_size=BATCH, verbose=0)
    np.testing.assert_allclose(history["val_loss"][-1], loss, rtol=1e-5)
    assert history["val_accuracy"][-1] == pytest.approx(accuracy)


def test_input_arrays_with_weights_hold_out_the_last_fraction():
    """No preprocessor: a dict of token-id arrays, with sample weights."""
    x = {name: np.asarray(value)
         for name, value in bert_preprocessor()(TEXTS).items()}
    weights = np.linspace(0.5, 1.5, len(TEXTS)).astype("float32")
    task = classifier(preprocessor=None)
    history = task.fit(x, LABELS, sample_weight=weights, batch_size=BATCH,
                       epochs=EPOCHS, validation_split=SPLIT,
                       verbose=0).history
    check_schedule_ends_at_zero(task)
    assert len(history["val_loss"]) == EPOCHS
    held = {name: value[TRAIN:] for name, value in x.items()}
    loss = task.evaluate(held, LABELS[TRAIN:], sample_weight=weights[TRAIN:],
                         batch_size=BATCH, verbose=0)[0]
    np.testing.assert_allclose(history["val_loss"][-1], loss, rtol=1e-5)


def test_word_lists_hold_out_the_last_fraction():
    """Nested lists (a token classifier's words and word labels)."""
    words = [text.rstrip(".").split() for text in TEXTS]
    tags = [[int(label)] * len(row) for row, label in zip(words, LABELS)]
    tagger = kzoo.TokenClassifier(
        make_tiny_bert(), num_classes=2,
        preprocessor=kzoo.TokenClassifierPreprocessor.from_preset(
            "bert_tiny_en_uncased", sequence_length=12))
    history = tagger.fit(words, tags, batch_size=BATCH, epochs=EPOCHS,
                         validation_split=SPLIT, verbose=0).history
    check_schedule_ends_at_zero(tagger)
    loss = tagger.evaluate(words[TRAIN:], tags[TRAIN:], batch_size=BATCH,
                           verbose=0)[0]
    np.testing.assert_allclose(history["val_loss"][-1], loss, rtol=1e-5)


def test_a_dataset_with_validation_split_is_refused_before_anything():
    import tensorflow as tf
    task = classifier()
    task.compile()
    dataset = tf.data.Dataset.from_tensor_slices(
        (TEXTS, LABELS)).batch(BATCH)
    with pytest.raises(ValueError, match="validation_split.*only supported "
                       "for tensors or NumPy arrays"):
        task.fit(dataset, epochs=1, validation_split=SPLIT, verbose=0)
    # Refused before the schedule was planned or a step taken.
    assert planned_schedule_of(task.optimizer).total_steps is None
    assert int(task.optimizer.iterations.numpy()) == 0


@pytest.mark.parametrize("split, message", [
    (1.0, r"validation_split must be a number in \[0, 1\)"),
    (-0.1, r"validation_split must be a number in \[0, 1\)"),
    ("0.3", r"validation_split must be a number in \[0, 1\)"),
    (0.95, "10 examples, which is not sufficient to split"),
])
def test_bad_validation_splits_get_clear_errors(split, message):
    task = classifier()
    with pytest.raises(ValueError, match=message):
        task.fit(TEXTS, LABELS, batch_size=BATCH, epochs=1,
                 validation_split=split, verbose=0)
    assert int(task.optimizer.iterations.numpy()) == 0
