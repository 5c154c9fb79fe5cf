"""XLM-R tasks: fit/predict from raw strings, fill_mask."""

import numpy as np
import pytest

import kzoo
from helpers import austen_paragraphs, check_task, to_numpy
from xlm_roberta_testing import (MASK_ID, XLMR_PRESET, XLMR_VOCABULARY,
                                 make_tiny_xlmr)

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def test_text_classifier(texts):
    # (Preset and .keras round trips: the registry-wide contract tests.)
    preprocessor = kzoo.XLMRobertaPreprocessor.from_preset(
        str(XLMR_PRESET), sequence_length=SEQ)
    task = kzoo.XLMRobertaTextClassifier(make_tiny_xlmr(), num_classes=3,
                                         preprocessor=preprocessor)
    _, logits = check_task(task, texts, np.arange(16) % 3)
    assert logits.shape == (16, 3)
    assert task.get_layer("classifier_dense").kernel.shape == (32, 32)
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_masked_lm_and_fill_mask(texts):
    preprocessor = kzoo.XLMRobertaMaskedLMPreprocessor.from_preset(
        str(XLMR_PRESET), sequence_length=SEQ)
    task = kzoo.XLMRobertaMaskedLM(make_tiny_xlmr(),
                                   preprocessor=preprocessor)
    _, logits = check_task(task, texts, None)
    assert logits.shape == (16, preprocessor.mask_selection_length,
                            XLMR_VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied

    filled = task.fill_mask(["The <mask> was shining.",
                             "Two <mask> and<mask>."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        assert len(candidates) == 3
        probabilities = [p for _, p in candidates]
        assert probabilities == sorted(probabilities, reverse=True)
    packed = to_numpy(task.preprocessor.pack(["a <mask>"]))
    assert (packed["token_ids"] == MASK_ID).sum() == 1
