"""RoBERTa tasks: fit/predict from raw strings, preset round trips,
fill_mask."""

import numpy as np
import pytest

import kzoo
from roberta_testing import (MASK_ID, ROBERTA_PRESET, ROBERTA_VOCABULARY,
                             make_tiny_roberta)
from helpers import austen_paragraphs, check_task, to_numpy

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def test_text_classifier(texts, tmp_path):
    preprocessor = kzoo.RobertaPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=SEQ)
    task = kzoo.RobertaTextClassifier(make_tiny_roberta(), num_classes=3,
                                      preprocessor=preprocessor)
    _, logits = check_task(task, texts, np.arange(16) % 3, tmp_path)
    assert logits.shape == (16, 3)
    # The original's head: its own dense + tanh on <s>, not the pooler.
    assert task.get_layer("classifier_dense").kernel.shape == (32, 32)
    # Sentence pairs go through the same model.
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_masked_lm_and_fill_mask(texts):
    # (Its preset and .keras round trips run in the registry-wide
    # contract tests; each tf.data pipeline of byte-level BPE costs
    # seconds to build.)
    preprocessor = kzoo.RobertaMaskedLMPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=SEQ)
    task = kzoo.RobertaMaskedLM(make_tiny_roberta(),
                                preprocessor=preprocessor)
    _, logits = check_task(task, texts, None)
    assert logits.shape == (16, preprocessor.mask_selection_length,
                            ROBERTA_VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied
    # The head's activation is the original's GELU, whatever the encoder's.
    relu = kzoo.RobertaMaskedLM(make_tiny_roberta(activation="relu"))
    assert relu.mlm_head.activation == "gelu"

    filled = task.fill_mask(["The <mask> was shining.",
                             "Two <mask> and<mask>."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        assert len(candidates) == 3
        probabilities = [p for _, p in candidates]
        assert probabilities == sorted(probabilities, reverse=True)
    with pytest.raises(ValueError, match='at least one "<mask>"'):
        task.fill_mask("No mask here.")
    packed = to_numpy(task.preprocessor.pack(["a <mask>"]))
    assert (packed["token_ids"] == MASK_ID).sum() == 1
