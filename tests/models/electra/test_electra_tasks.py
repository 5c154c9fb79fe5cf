"""ELECTRA tasks: fit/predict from raw strings, preset round trips, the
original heads, fill_mask, and the pretrainer's shared embeddings."""

import numpy as np
import pytest

import kzoo
from electra_testing import ELECTRA_PRESET, VOCABULARY, make_tiny_electra
from helpers import (BERT_SPECIAL_IDS, austen_paragraphs, check_task,
                     to_numpy)
from kzoo.models.electra.pretrainer import generator_shape

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def preprocessor(cls=kzoo.ElectraPreprocessor, **kwargs):
    return cls.from_preset(ELECTRA_PRESET, sequence_length=SEQ, **kwargs)


def test_text_classifier(texts, tmp_path):
    task = kzoo.ElectraTextClassifier(make_tiny_electra(), num_classes=3,
                                      preprocessor=preprocessor())
    _, logits = check_task(task, texts, np.arange(16) % 3, tmp_path)
    assert logits.shape == (16, 3)
    # The original's head: dense + GELU on [CLS], then out_proj.
    assert task.get_layer("classifier_dense").kernel.shape == (32, 32)
    assert task.hidden_activation == "gelu"
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_masked_lm_and_fill_mask(texts):
    task = kzoo.ElectraMaskedLM(
        make_tiny_electra(), preprocessor=preprocessor(
            kzoo.ElectraMaskedLMPreprocessor))
    _, logits = check_task(task, texts, None)
    assert logits.shape == (16, task.preprocessor.mask_selection_length,
                            VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied
    # generator_predictions: hidden (32) -> embedding size (24), GELU,
    # LayerNorm at 24, whatever the encoder's activation.
    assert task.mlm_head.transform.kernel.shape == (32, 24)
    assert task.mlm_head.layer_norm.gamma.shape == (24,)
    relu = kzoo.ElectraMaskedLM(make_tiny_electra(activation="relu"))
    assert relu.mlm_head.activation == "gelu"

    filled = task.fill_mask(["The [MASK] was shining.",
                             "Two [MASK] and [MASK]."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        probabilities = [p for _, p in candidates]
        assert len(candidates) == 3
        assert probabilities == sorted(probabilities, reverse=True)
    with pytest.raises(ValueError, match=r'at least one "\[MASK\]"'):
        task.fill_mask("No mask here.")


def test_discriminator_scores_every_token(texts, tmp_path):
    task = kzoo.ElectraDiscriminator(make_tiny_electra(activation="relu"),
                                     preprocessor=preprocessor())
    labels = np.zeros((16, SEQ), "float32")
    labels[:, 3] = 1.0
    _, logits = check_task(task, texts, labels, tmp_path)
    assert logits.shape == (16, SEQ)
    head = task.discriminator_predictions
    assert head.activation == "relu"  # the encoder's, as the original
    assert head.dense.kernel.shape == (32, 32)
    assert head.dense_prediction.kernel.shape == (32, 1)


# The pretrainer samples in its step: every backend (tests/conftest.py).
@pytest.mark.every_backend
def test_pretrainer_shares_the_embedding_tables(texts, tmp_path):
    backbone = make_tiny_electra()
    task = kzoo.ElectraPretrainer(
        backbone, preprocessor=preprocessor(kzoo.ElectraMaskedLMPreprocessor),
        generator_size=0.25, seed=3)
    for name in ("token_embedding", "position_embedding",
                 "segment_embedding"):
        table = backbone.get_layer(name).embeddings
        assert sum(w is table for w in task.weights) == 1, name
    # The generator: a quarter of the hidden size, one head, 4x FFN, the
    # discriminator's depth, its own projection (24 -> 8); the embedding
    # LayerNorm is the discriminator's (test_electra_original_pretraining).
    assert generator_shape(32, 0.25) == (8, 1, 32)
    assert task.get_layer("generator_embeddings_project").kernel.shape == \
        (24, 8)
    assert task.get_layer("generator_transformer_layer_1") is not None
    assert task.generator_predictions.transform.kernel.shape == (8, 24)

    history, outputs = check_task(task, texts, None, tmp_path)
    assert {"generator_loss", "discriminator_loss", "generator_accuracy",
            "discriminator_accuracy"} <= set(history.history)
    masks = task.preprocessor.mask_selection_length
    assert outputs["generator"].shape == (16, masks, VOCABULARY)
    assert outputs["discriminator"].shape == (16, SEQ)
    assert outputs["sampled_ids"].shape == (16, masks)
    assert not np.isin(outputs["sampled_ids"], [-1, VOCABULARY]).any()


def test_replacements_land_at_the_masks_only():
    """The discriminator's input is the masked text with the samples at
    the real masks; empty slots (position 0, weight 0) change nothing."""
    from kzoo.models.electra.pretrainer import replace_at_positions
    ids = np.array([[101, 5, 6, 7, 102], [101, 8, 9, 102, 0]], "int32")
    positions = np.array([[1, 3, 0], [2, 0, 0]], "int32")
    samples = np.array([[50, 60, 70], [80, 90, 99]], "int32")
    out = to_numpy(replace_at_positions(ids, positions, samples))
    np.testing.assert_array_equal(out, [[101, 50, 6, 60, 102],
                                        [101, 8, 80, 102, 0]])
    assert BERT_SPECIAL_IDS["[CLS]"] == out[0, 0]


# The pretrainer samples in its step: every backend (tests/conftest.py).
@pytest.mark.every_backend
def test_replacements_are_draws_from_the_generators_softmax():
    """`inverse_cdf_draw` (one uniform per mask) lands on each token as
    often as its softmax probability says, never on a token of
    probability 0, and draws afresh from a seed generator."""
    import keras
    from kzoo.models.electra.pretrainer import inverse_cdf_draw
    probs = np.array([0.5, 0.0, 0.3, 0.15, 0.05])
    rows = 20000
    logits = np.tile(np.log(np.maximum(probs, 1e-30)), (rows, 1))
    logits[:, 1] = -1e9
    seed = keras.random.SeedGenerator(3)
    draws = to_numpy(inverse_cdf_draw(logits.astype("float32"), seed))
    counts = np.bincount(draws, minlength=5)
    assert counts[1] == 0 and counts.sum() == rows
    spread = np.sqrt(rows * probs * (1 - probs))
    assert np.all(np.abs(counts - rows * probs) < 4 * spread + 1), counts
    again = to_numpy(inverse_cdf_draw(logits[:100].astype("float32"), seed))
    assert np.any(again != draws[:100])
