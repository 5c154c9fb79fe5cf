"""BERT tasks: fit/predict from raw strings, preset round trips, compile
defaults. Batch sizes divide the data so each graph compiles once."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import (austen_paragraphs, check_task, check_task_preset,
                     make_tiny_bert, to_numpy)

SEQ = 16


@pytest.fixture(scope="module")
def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:18]


def preprocessor_for(cls, **kwargs):
    return cls.preprocessor_cls.from_preset("bert_base_en_uncased",
                                            sequence_length=SEQ, **kwargs)


def test_text_classifier(texts, tmp_path):
    task = kzoo.BertTextClassifier(
        make_tiny_bert(), num_classes=3,
        preprocessor=preprocessor_for(kzoo.BertTextClassifier))
    labels = np.arange(16) % 3
    _, logits = check_task(task, texts[:16], labels, tmp_path,
                           from_dataset=True)
    assert logits.shape == (16, 3)
    # Sentence pairs go through the same model (same packed shape).
    pairs = (texts[:8], texts[8:16])
    _, logits = check_task(task, pairs, np.arange(8) % 3,
                           from_dataset=True)
    assert logits.shape == (8, 3)


def test_masked_lm(texts, tmp_path):
    task = kzoo.BertMaskedLM(
        make_tiny_bert(), preprocessor=preprocessor_for(kzoo.BertMaskedLM))
    _, logits = check_task(task, texts[:16], None, tmp_path,
                           from_dataset=True)
    masks = task.preprocessor.mask_selection_length
    assert logits.shape == (16, masks, 30522)
    # Tied head: one matrix serves as embedding and output projection.
    embedding = task.backbone.token_embedding.embeddings
    assert sum(w is embedding for w in task.weights) == 1


def test_pretrainer(texts, tmp_path):
    task = kzoo.BertPretrainer(
        make_tiny_bert(), preprocessor=preprocessor_for(kzoo.BertPretrainer))
    first, second, labels = kzoo.preprocessing.next_sentence_pairs(
        [texts[:9], texts[9:18]], seed=0)
    assert len(first) == 16
    history, out = check_task(task, (first, second), labels, tmp_path)
    assert {"mlm_loss", "nsp_loss"} <= set(history.history), history.history
    assert out["nsp"].shape == (16, 2)
    assert out["mlm"].shape == (16, task.preprocessor.mask_selection_length,
                                30522)


def test_task_preset_from_named_preset(tmp_path):
    # A task built from a named preset (random weights) round-trips too,
    # and keeps its preprocessor's sequence length.
    task = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_classes=2,
        sequence_length=SEQ)
    assert task.preprocessor.sequence_length == SEQ
    loaded = check_task_preset(task, tmp_path)
    assert loaded.preprocessor.sequence_length == SEQ
    assert loaded.num_classes == 2


def test_default_compile_then_user_override(texts):
    task = kzoo.BertTextClassifier(
        make_tiny_bert(), num_classes=2,
        preprocessor=preprocessor_for(kzoo.BertTextClassifier))
    task.compile()  # what fit() does when the user has not compiled
    assert isinstance(task.optimizer, keras.optimizers.AdamW)
    assert isinstance(task.loss, keras.losses.SparseCategoricalCrossentropy)
    # The user swaps the optimizer only: loss and metrics stay the task's.
    sgd = keras.optimizers.SGD(learning_rate=0.01)
    task.compile(optimizer=sgd)
    assert task.optimizer is sgd
    assert isinstance(task.loss, keras.losses.SparseCategoricalCrossentropy)
    assert task.loss.get_config()["from_logits"] is True
    history = task.fit(texts[:16], np.arange(16) % 2, batch_size=8,
                       epochs=1, verbose=0)
    assert "accuracy" in history.history
    assert int(to_numpy(sgd.iterations)) == 2
    # An explicit loss does replace the default.
    mine = keras.losses.SparseCategoricalCrossentropy(from_logits=True,
                                                      name="mine")
    task.compile(loss=mine)
    assert task.loss is mine


def test_task_without_preprocessor_takes_input_dicts(texts):
    preprocessor = preprocessor_for(kzoo.BertTextClassifier)
    task = kzoo.BertTextClassifier(make_tiny_bert(), num_classes=2)
    x = to_numpy(preprocessor(texts[:4]))
    history = task.fit(x, np.array([0, 1, 0, 1]), batch_size=4, epochs=1,
                       verbose=0)
    assert np.isfinite(history.history["loss"][0])
    logits = to_numpy(task.predict(x, batch_size=4, verbose=0))
    assert logits.shape == (4, 2)
