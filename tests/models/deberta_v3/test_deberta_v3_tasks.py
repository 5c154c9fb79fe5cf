"""DeBERTa-v3 tasks: fit/predict from raw strings, preset round trips,
fill_mask, the original's pooler."""

import numpy as np
import pytest

import kzoo
from deberta_v3_testing import (DEBERTA_PRESET, MASK_ID, VOCABULARY,
                                make_tiny_deberta)
from helpers import austen_paragraphs, check_task, to_numpy

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def test_text_classifier(texts, tmp_path):
    preprocessor = kzoo.DebertaV3Preprocessor.from_preset(
        DEBERTA_PRESET, sequence_length=SEQ)
    task = kzoo.DebertaV3TextClassifier(make_tiny_deberta(), num_classes=3,
                                        preprocessor=preprocessor,
                                        pooler_dropout=0.1)
    _, logits = check_task(task, texts, np.arange(16) % 3, tmp_path)
    assert logits.shape == (16, 3)
    # The original's ContextPooler: its own dense on the first token.
    assert task.get_layer("pooler_dense").kernel.shape == (32, 32)
    assert task.get_config()["pooler_dropout"] == 0.1
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_masked_lm_and_fill_mask(texts):
    preprocessor = kzoo.DebertaV3MaskedLMPreprocessor.from_preset(
        DEBERTA_PRESET, sequence_length=SEQ)
    task = kzoo.DebertaV3MaskedLM(make_tiny_deberta(),
                                  preprocessor=preprocessor)
    _, logits = check_task(task, texts, None)
    assert logits.shape == (16, preprocessor.mask_selection_length,
                            VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied

    filled = task.fill_mask(["The [MASK] was shining.",
                             "Two [MASK] and[MASK]."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        probabilities = [p for _, p in candidates]
        assert len(candidates) == 3
        assert probabilities == sorted(probabilities, reverse=True)
    with pytest.raises(ValueError, match=r'at least one "\[MASK\]"'):
        task.fill_mask("No mask here.")
    packed = to_numpy(task.preprocessor.pack(["a [MASK]"]))
    assert (packed["token_ids"] == MASK_ID).sum() == 1
