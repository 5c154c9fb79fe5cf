"""ALBERT tasks: fit/predict from raw strings, preset round trips,
fill_mask, the pretrainer on sentence-order pairs."""

import numpy as np
import pytest

import kzoo
from albert_testing import (ALBERT_PRESET, ALBERT_VOCABULARY, SPECIAL_IDS,
                            make_tiny_albert)
from helpers import austen_chapters, austen_paragraphs, check_task, to_numpy

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def test_text_classifier(texts, tmp_path):
    preprocessor = kzoo.AlbertPreprocessor.from_preset(
        ALBERT_PRESET, sequence_length=SEQ)
    task = kzoo.AlbertTextClassifier(make_tiny_albert(), num_classes=3,
                                     preprocessor=preprocessor)
    # The original's classifier_dropout_prob, not the (v2: zero) hidden one.
    assert task.dropout == 0.1 and task.backbone.dropout == 0.0
    _, logits = check_task(task, texts, np.arange(16) % 3, tmp_path)
    assert logits.shape == (16, 3)
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_masked_lm_and_fill_mask(texts):
    preprocessor = kzoo.AlbertMaskedLMPreprocessor.from_preset(
        ALBERT_PRESET, sequence_length=SEQ)
    task = kzoo.AlbertMaskedLM(make_tiny_albert(), preprocessor=preprocessor)
    _, logits = check_task(task, texts, None)
    assert logits.shape == (16, preprocessor.mask_selection_length,
                            ALBERT_VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied
    # The original head: hidden -> embedding width, LayerNorm there, the
    # backbone's activation (gelu_new).
    head = task.mlm_head
    assert tuple(head.transform.kernel.shape) == (24, 10)
    assert tuple(head.layer_norm.gamma.shape) == (10,)
    assert head.activation == "gelu_new"

    filled = task.fill_mask(["The [MASK] was shining.",
                             "Two [MASK] and[MASK]."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        probabilities = [p for _, p in candidates]
        assert len(candidates) == 3
        assert probabilities == sorted(probabilities, reverse=True)
    with pytest.raises(ValueError, match=r'at least one "\[MASK\]"'):
        task.fill_mask("No mask here.")


def test_pretrainer_on_sentence_order_pairs(tmp_path):
    chapters = austen_chapters("pride_and_prejudice")
    first, second, labels = kzoo.preprocessing.sentence_order_pairs(
        chapters, seed=0)
    first, second, labels = first[:16], second[:16], labels[:16]
    preprocessor = kzoo.AlbertPretrainerPreprocessor.from_preset(
        ALBERT_PRESET, sequence_length=32)
    task = kzoo.AlbertPretrainer(make_tiny_albert(), preprocessor=preprocessor,
                                 dropout=0.2)
    _, outputs = check_task(task, (first, second), labels, tmp_path)
    assert outputs["sop"].shape == (16, 2)
    assert outputs["mlm"].shape == (16, preprocessor.mask_selection_length,
                                    ALBERT_VOCABULARY)
    assert task.get_config()["dropout"] == 0.2
    assert task.get_layer("sop_dropout").rate == 0.2
    # Targets as Hugging Face's AlbertForPreTraining names them.
    x, y, weights = preprocessor((first[:4], second[:4]), labels[:4])
    assert sorted(y) == ["mlm", "sop"]
    np.testing.assert_array_equal(to_numpy(y["sop"]), labels[:4])
    # Segment ids: 0 for the first sentence, 1 for the second.
    segments = to_numpy(x["segment_ids"])[0]
    tokens = to_numpy(x["token_ids"])[0]
    assert tokens[0] == SPECIAL_IDS["[CLS]"] and segments[0] == 0
    assert set(segments.tolist()) == {0, 1}
    with pytest.raises(ValueError, match="sentence_order_pairs"):
        preprocessor(first[:4])
    with pytest.raises(ValueError, match="sentence-order labels"):
        task.fit((first, second), labels + 2, epochs=1, verbose=0)


def test_tasks_need_an_albert_backbone():
    from kzoo.core.arguments import ArgumentError
    with pytest.raises(ArgumentError, match="needs a AlbertBackbone"):
        kzoo.AlbertMaskedLM(kzoo.BertBackbone(
            vocabulary_size=50, num_layers=1, num_heads=2, hidden_dim=8,
            intermediate_dim=8))
