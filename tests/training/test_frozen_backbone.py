"""Frozen means inference mode: a backbone with `trainable = False` (the
token classifier's and multiple choice's `trainable_backbone=False`, the
linear probe of guides/fine_tuning_recipes.py, a user freezing any task's
backbone) runs without dropout inside `fit`, so its head trains on the
features it is later scored on."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import make_tiny_bert

CONTEXTS = ["Elizabeth walked to Meryton.", "Jane caught a cold."]
CHOICES = [["She met her aunt.", "She flew home."],
           ["She stayed in bed.", "She lifted a horse."]]


def token_classifier(trainable):
    task = kzoo.TokenClassifier(
        make_tiny_bert(), label_names=["O", "B-PER"],
        preprocessor=kzoo.TokenClassifierPreprocessor.from_preset(
            "bert_base", sequence_length=12),
        trainable_backbone=trainable)
    return task, ([["Elizabeth", "Bennet", "walked"], ["Jane", "smiled"]],
                  [["B-PER", "O", "O"], ["B-PER", "O"]])


def multiple_choice(trainable):
    task = kzoo.MultipleChoice(
        make_tiny_bert(),
        preprocessor=kzoo.MultipleChoicePreprocessor.from_preset(
            "bert_base", sequence_length=12),
        trainable_backbone=trainable)
    return task, ((CONTEXTS, CHOICES), [0, 1])


def text_classifier(trainable):
    # The guide's linear probe: the user freezes the backbone.
    task = kzoo.BertTextClassifier(
        make_tiny_bert(), num_classes=2,
        preprocessor=kzoo.BertPreprocessor.from_preset(
            "bert_base", sequence_length=12))
    task.backbone.trainable = trainable
    return task, (["A fine morning.", "A dull evening."], [1, 0])


def features_seen_in_fit(build, trainable, monkeypatch):
    """The backbone's sequence outputs in the two training steps (two
    epochs of one batch), and its inference-mode outputs on that batch."""
    task, (x, y) = build(trainable)
    task.compile(optimizer=keras.optimizers.SGD(0.0), run_eagerly=True)
    # A first fit builds the optimizer and metrics (on jax by tracing
    # abstract values, which the recording below could not read).
    task.fit(x, y, batch_size=len(y), epochs=1, verbose=0)
    seen = []
    call = task.backbone.call

    def recording_call(inputs, *args, **kwargs):
        outputs = call(inputs, *args, **kwargs)
        seen.append((inputs, keras.ops.convert_to_numpy(
            keras.ops.stop_gradient(outputs["sequence_output"]))))
        return outputs

    monkeypatch.setattr(task.backbone, "call", recording_call)
    task.fit(x, y, batch_size=len(y), epochs=2, shuffle=False, verbose=0)
    monkeypatch.undo()
    assert len(seen) == 2 and same_inputs(seen[0][0], seen[1][0])
    batch = seen[1][0]
    steps = [features for _, features in seen]
    clean = keras.ops.convert_to_numpy(
        task.backbone(batch, training=False)["sequence_output"])
    return steps[0], steps[1], clean


def same_inputs(a, b):
    a, b = (keras.ops.convert_to_numpy(a["token_ids"]),
            keras.ops.convert_to_numpy(b["token_ids"]))
    return a.shape == b.shape and (a == b).all()


@pytest.mark.parametrize("build", [token_classifier, multiple_choice,
                                   text_classifier])
def test_frozen_backbone_runs_without_dropout_in_fit(build, monkeypatch):
    first, second, clean = features_seen_in_fit(build, False, monkeypatch)
    np.testing.assert_allclose(first, second, atol=1e-6)
    np.testing.assert_allclose(first, clean, atol=1e-5)


def test_trainable_backbone_keeps_dropout_in_fit(monkeypatch):
    # The same capture sees dropout when the backbone trains (a learning
    # rate of 0 keeps the weights, so only dropout moves the features).
    first, second, clean = features_seen_in_fit(text_classifier, True,
                                                monkeypatch)
    assert np.abs(first - second).max() > 1e-2
    assert np.abs(first - clean).max() > 1e-2
