"""BART's denoising pretraining on raw text: BartDenoisingLM (BART with
BartDenoisingPreprocessor) learns to restore Austen's text from its
noised version (the loss falls), from strings alone."""

import keras

import kzoo
from bart_testing import BART_PRESET, make_tiny_bart
from helpers import austen_passages


def test_denoising_pretraining_lowers_the_loss():
    keras.utils.set_random_seed(0)
    preprocessor = kzoo.BartDenoisingPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=24, seed=0)
    lm = kzoo.BartDenoisingLM(make_tiny_bart(dropout=0.0),
                              preprocessor=preprocessor)
    texts = austen_passages("pride_and_prejudice", words=16)[:24]
    # A tiny model from scratch: a constant rate; two epochs of one fit
    # call (fresh noise in each), read from its history.
    lm.compile(optimizer=keras.optimizers.Adam(1e-2))
    history = lm.fit(texts, batch_size=8, epochs=2, verbose=0).history
    first, second = history["loss"]
    assert second < first - 0.5, history
