"""Training is real: tiny DeBERTa-v3s learn from real text (Jane Austen),
from random weights."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from deberta_v3_testing import DEBERTA_PRESET, make_tiny_deberta
from helpers import AUSTEN_NOVELS, austen_passages, to_numpy

SEQ = 32


@pytest.fixture(scope="module")
def passages():
    return {novel: austen_passages(novel, words=20) for novel in AUSTEN_NOVELS}


@pytest.mark.convergence
def test_masked_lm_loss_falls(passages):
    texts = [t for novel in AUSTEN_NOVELS for t in passages[novel]]
    task = kzoo.DebertaV3MaskedLM(
        make_tiny_deberta(hidden_dim=64, intermediate_dim=128),
        preprocessor=kzoo.DebertaV3MaskedLMPreprocessor.from_preset(
            DEBERTA_PRESET, sequence_length=SEQ))
    task.compile(optimizer=keras.optimizers.AdamW(learning_rate=2e-3))
    dataset = tf.data.Dataset.from_tensor_slices(texts).shuffle(
        len(texts), seed=0).batch(16, drop_remainder=True)
    history = task.fit(dataset.repeat(), steps_per_epoch=8, epochs=6,
                       verbose=0)
    losses = history.history["loss"]
    assert all(np.isfinite(losses)), losses
    # From ln(1005) ~ 6.9 (uniform over the stand-in's 1005 tokens): the
    # small vocabulary leaves less to gain than RoBERTa's 50K. Measured
    # with scripts/measure_spread.py, torch, seeds 1-5: last/first 0.846
    # +- 0.010 (0.829-0.854): 0.88 is 3.4 sd above.
    # The loss can level off from the fourth epoch (seed 4: 5.66, 5.66,
    # 5.75 over the last three), so a fall over the last epochs is not
    # asserted; it failed there with 0.87 beside it (2.4 sd).
    assert losses[-1] < 0.88 * losses[0], losses
    assert max(losses[-3:]) < losses[0], losses


@pytest.mark.convergence
def test_classifier_fits_real_labelled_text(passages):
    # 32 passages labelled by novel (0: Pride and Prejudice, 1: Sense and
    # Sensibility), fitted from raw strings.
    first, second = (passages[n] for n in AUSTEN_NOVELS)
    texts = [t for pair in zip(first[:16], second[:16]) for t in pair]
    labels = np.tile([0, 1], 16)
    task = kzoo.DebertaV3TextClassifier(
        make_tiny_deberta(), num_classes=2,
        preprocessor=kzoo.DebertaV3Preprocessor.from_preset(
            DEBERTA_PRESET, sequence_length=SEQ))
    task.compile(optimizer=keras.optimizers.AdamW(learning_rate=3e-3))
    dataset = tf.data.Dataset.from_tensor_slices((texts, labels)).batch(32)
    history = task.fit(dataset.repeat(), steps_per_epoch=5, epochs=6,
                       verbose=0)
    losses = history.history["loss"]
    assert abs(losses[0] - np.log(2)) < 0.15, losses[0]
    assert losses[-1] < 0.25 * losses[0], losses
    predicted = np.argmax(to_numpy(task.predict(texts, batch_size=32,
                                                verbose=0)), axis=-1)
    assert np.mean(predicted == labels) == 1.0
