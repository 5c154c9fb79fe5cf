"""DistilBERT tasks: fit/predict from raw strings, preset round trips,
fill_mask, the original heads."""

import numpy as np
import pytest

import kzoo
from distil_bert_testing import PRESET, VOCABULARY, make_tiny_distil_bert
from helpers import austen_paragraphs, check_task, to_numpy

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:16]


def test_text_classifier(texts, tmp_path):
    preprocessor = kzoo.DistilBertPreprocessor.from_preset(
        PRESET, sequence_length=SEQ)
    task = kzoo.DistilBertTextClassifier(make_tiny_distil_bert(),
                                         num_classes=3,
                                         preprocessor=preprocessor)
    _, logits = check_task(task, texts, np.arange(16) % 3, tmp_path)
    assert logits.shape == (16, 3)
    # The original's head: pre_classifier + ReLU on [CLS], seq_classif
    # dropout 0.2.
    assert task.get_layer("classifier_dense").kernel.shape == (32, 32)
    assert task.dropout == 0.2
    logits = to_numpy(task.predict((texts[:8], texts[8:]), batch_size=8,
                                   verbose=0))
    assert logits.shape == (8, 3) and np.isfinite(logits).all()


def test_classifier_head_is_relu_then_dropout():
    """pooled = dropout(relu(pre_classifier([CLS]))): with dropout 1.0 in
    training every logit is the classifier's bias, so nothing drops out
    before pre_classifier that the ReLU could not hide either."""
    import keras
    backbone = make_tiny_distil_bert(vocabulary_size=50)
    task = kzoo.DistilBertTextClassifier(backbone, num_classes=2)
    x = {"token_ids": np.array([[2, 5, 6, 3]], "int32"),
         "padding_mask": np.ones((1, 4), "int32")}
    cls = to_numpy(backbone(x))["sequence_output"][:, 0]
    dense, out = task.get_layer("classifier_dense"), task.get_layer(
        "classifier")
    hidden = np.maximum(cls @ to_numpy(dense.kernel) + to_numpy(dense.bias),
                        0)
    expected = hidden @ to_numpy(out.kernel) + to_numpy(out.bias)
    np.testing.assert_allclose(to_numpy(task(x, training=False)), expected,
                               atol=1e-5)
    assert keras.ops.convert_to_numpy(task(x)).shape == (1, 2)


def test_masked_lm_and_fill_mask(texts, tmp_path):
    preprocessor = kzoo.DistilBertMaskedLMPreprocessor.from_preset(
        PRESET, sequence_length=SEQ)
    task = kzoo.DistilBertMaskedLM(make_tiny_distil_bert(activation="relu"),
                                   preprocessor=preprocessor)
    _, logits = check_task(task, texts, None, tmp_path)
    assert logits.shape == (16, preprocessor.mask_selection_length,
                            VOCABULARY)
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1  # tied
    # The head's activation is the backbone's, as Hugging Face's.
    assert task.mlm_head.activation == "relu"

    filled = task.fill_mask(["The [MASK] was shining.",
                             "Two [MASK] and[MASK]."], top_k=3)
    assert [len(row) for row in filled] == [1, 2]
    for candidates in filled[1]:
        probabilities = [p for _, p in candidates]
        assert len(candidates) == 3
        assert probabilities == sorted(probabilities, reverse=True)
    with pytest.raises(ValueError, match=r'at least one "\[MASK\]"'):
        task.fill_mask("No mask here.")
