"""A task counts as built as soon as it is made or loaded, its preprocessor
included (no weights; it sets itself up on first use). Keras' JAX trainer
otherwise runs the whole task eagerly, op by op, before every
`predict_on_batch` (and once per `predict`) to "build" it: on a task
loaded with `keras.saving.load_model`, one XLA compile per eager op (the
cross-backend training test's JAX worker spent 9.5 of its 58 s there).
Checked on every backend: the layers' flags on each, the single pass
where the trainer looks at them."""

import keras
import numpy as np

import kzoo
from helpers import to_numpy
from text_testing import (example_texts, make_task, model_inputs,
                          tiny_backbone)


def _task():
    return make_task(kzoo.BertTextClassifier,
                     backbone=tiny_backbone(kzoo.BertBackbone, dropout=0.0))


def _loaded(task, tmp_path):
    task.save(tmp_path / "task.keras")
    return keras.saving.load_model(tmp_path / "task.keras")


def _unbuilt(model):
    return [layer.name for layer in model._flatten_layers()
            if not layer.built]


def test_made_and_loaded_tasks_have_every_layer_built(tmp_path):
    task = _task()
    assert _unbuilt(task) == []
    assert _unbuilt(_loaded(task, tmp_path)) == []


def test_loaded_task_runs_once_per_predict_on_batch(tmp_path):
    task = _task()
    inputs = to_numpy(model_inputs(task.preprocessor(
        example_texts(type(task.preprocessor)))))
    loaded = _loaded(task, tmp_path)
    calls = []
    call = loaded.call

    def counted(*args, **kwargs):
        calls.append(1)
        return call(*args, **kwargs)
    loaded.call = counted
    outputs = loaded.predict_on_batch(inputs)
    # Traced once (jax, tensorflow) or run once (torch); never an extra
    # eager pass first.
    assert len(calls) == 1
    np.testing.assert_allclose(
        to_numpy(outputs), to_numpy(task.predict_on_batch(inputs)),
        atol=1e-5)
