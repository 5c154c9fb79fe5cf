"""A task's preprocessing graph meets texts alone (`predict`) and texts
with labels (`fit`, `evaluate`) in one session. Predicting on more texts
than are prepared eagerly, then fine-tuning on them with labels, crashed
inside TensorFlow's retracing (an IndexError, on every backend: the
preprocessing is TensorFlow's) until each traced graph was kept once per
number of arguments (kzoo/utils/traced.py)."""

import numpy as np

import kzoo
from kzoo.core import input_pipeline
from text_testing import example_labels, example_texts, make_task


def test_predict_then_fit_and_evaluate_in_the_traced_graph(monkeypatch):
    # Every example count takes the traced path (as past 1,024 texts).
    monkeypatch.setattr(input_pipeline, "EAGER_PREPROCESS_LIMIT", 0)
    task = make_task(kzoo.BertTextClassifier)
    x = example_texts(kzoo.BertPreprocessor)
    y = example_labels(kzoo.BertPreprocessor)
    assert np.all(np.isfinite(task.predict(x, verbose=0)))
    history = task.fit(x, y, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    loss = task.evaluate(x, y, verbose=0)
    assert np.isfinite(np.ravel(loss)[0])
