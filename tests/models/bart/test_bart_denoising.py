"""BART's denoising pretraining on raw text: BartDenoisingLM (BART with
BartDenoisingPreprocessor) learns to restore Austen's text from its
noised version (the loss falls), from strings alone."""

import keras
import pytest

import kzoo
from bart_testing import BART_PRESET, fit_batch_losses, make_tiny_bart
from helpers import austen_passages


@pytest.mark.convergence
def test_denoising_pretraining_lowers_the_loss():
    keras.utils.set_random_seed(0)
    preprocessor = kzoo.BartDenoisingPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=24, seed=0)
    lm = kzoo.BartDenoisingLM(make_tiny_bart(dropout=0.0),
                              preprocessor=preprocessor)
    texts = austen_passages("pride_and_prejudice", words=16)[:16]
    # A tiny model from scratch, 8 steps at a constant rate, 4 times over
    # the same 16 texts (fresh noise each time) in one epoch: the last
    # steps' loss is well below the first ones'.
    lm.compile(optimizer=keras.optimizers.Adam(1e-2))
    losses = fit_batch_losses(lm, texts * 4, batch_size=8)
    assert len(losses) == 8
    assert losses[-2:].mean() < losses[:2].mean() - 0.5, losses
