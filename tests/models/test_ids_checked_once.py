"""Token ids are checked once, before the steps, where kzoo can vouch for
every batch (the preprocessor made them, or in-memory arrays were checked
whole); the eager steps of torch then no longer copy each batch's ids to
NumPy to check them again. Ids kzoo has not seen (a dataset of ids) are
still checked at every call."""

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from kzoo.core.backbone import Backbone

TEXTS = ["The sun was shining.", "It rained all day.", "A cold wind blew.",
         "The garden was in bloom.", "Snow fell at night.", "A warm day."]
LABELS = np.array([0, 1, 1, 0, 1, 0])


def tiny_classifier(preprocessor="auto"):
    backbone = kzoo.BertBackbone.from_preset(
        "bert_tiny_en_uncased", load_weights=False, num_layers=1,
        hidden_dim=16, num_heads=2, intermediate_dim=32)
    if preprocessor == "auto":
        preprocessor = kzoo.BertPreprocessor.from_preset(
            "bert_tiny_en_uncased", sequence_length=12)
    classifier = kzoo.BertTextClassifier(backbone, num_classes=2,
                                         preprocessor=preprocessor)
    classifier.compile(optimizer="adam")
    return classifier


@pytest.fixture
def id_checks(monkeypatch):
    """How many times a backbone checked id values."""
    calls = []
    original = Backbone._check_ids

    def counted(self, *args):
        calls.append(args[0])
        return original(self, *args)
    monkeypatch.setattr(Backbone, "_check_ids", counted)
    return calls


def ids(classifier, rows=6, bad=False):
    x = {k: np.array(v) for k, v in
         tiny_classifier().preprocessor(TEXTS[:rows]).items()}
    if bad:
        x["token_ids"][1, 2] = classifier.backbone.vocabulary_size
    return x


def test_no_per_step_id_checks_on_text(id_checks):
    classifier = tiny_classifier()
    classifier.fit(TEXTS, LABELS, batch_size=2, epochs=2, verbose=0)
    classifier.evaluate(TEXTS, LABELS, batch_size=2, verbose=0)
    classifier.predict(TEXTS, batch_size=2, verbose=0)
    assert id_checks == []
    # Outside fit/evaluate/predict every eager call checks again.
    bad = ids(classifier, bad=True)
    with pytest.raises(ValueError, match="outside"):
        classifier.backbone(bad)


def test_in_memory_ids_checked_once(id_checks):
    classifier = tiny_classifier(preprocessor=None)
    classifier.fit(ids(classifier), LABELS, batch_size=2, epochs=2,
                   verbose=0)
    classifier.predict(ids(classifier), batch_size=2, verbose=0)
    # Once per call on the whole arrays (fit, predict), not per batch.
    assert id_checks.count("token_ids") == 2
    with pytest.raises(ValueError, match="outside"):
        classifier.fit(ids(classifier, bad=True), LABELS, batch_size=2,
                       verbose=0)


def test_dataset_of_ids_still_checked_per_step(id_checks):
    classifier = tiny_classifier(preprocessor=None)
    dataset = tf.data.Dataset.from_tensor_slices(
        (ids(classifier), LABELS)).batch(2)
    classifier.fit(dataset, epochs=1, verbose=0)
    if keras.backend.backend() == "torch":  # eager steps: checked there
        assert id_checks.count("token_ids") == 3  # batches
        bad = tf.data.Dataset.from_tensor_slices(
            (ids(classifier, bad=True), LABELS)).batch(2)
        with pytest.raises(ValueError, match="outside"):
            classifier.fit(bad, epochs=1, verbose=0)
    else:  # compiled steps: values are symbolic, never checked there
        assert id_checks == []


def test_raw_text_with_sample_weights_fits_and_evaluates():
    # In-memory text with sample weights (on JAX, as NumPy arrays given to
    # Keras by keyword: its third positional argument is batch_size). A
    # zero weight takes an example out of the loss (Keras then divides the
    # weighted sum by the batch's size: half the unweighted mean here).
    classifier = tiny_classifier()
    weights = np.array([1.0, 1.0, 1.0, 0.0, 0.0, 0.0])
    history = classifier.fit(TEXTS, LABELS, sample_weight=weights,
                             batch_size=6, epochs=1, shuffle=False,
                             verbose=0)
    assert np.isfinite(history.history["loss"][0])
    weighted = classifier.evaluate(TEXTS, LABELS, sample_weight=weights,
                                   batch_size=6, verbose=0,
                                   return_dict=True)["loss"]
    first_half = classifier.evaluate(TEXTS[:3], LABELS[:3], batch_size=6,
                                     verbose=0, return_dict=True)["loss"]
    np.testing.assert_allclose(weighted, first_half / 2, rtol=1e-5)
