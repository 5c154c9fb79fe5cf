"""TensorFlow with N logical CPU devices (default 2): `fit` on raw strings
through the task's preprocessor under `MirroredStrategy`, against a single
device; and a preset loaded and saved inside `strategy.scope()`.

Run with KERAS_BACKEND=tensorflow; writes a JSON report to argv[1].
`--devices N` sets the logical device count, `--time` times a step.
"""

import sys
import tempfile

import tensorflow as tf

DEVICES = int(sys.argv[sys.argv.index("--devices") + 1]) \
    if "--devices" in sys.argv else 2
# Logical devices must be configured before TensorFlow initialises.
_cpu = tf.config.list_physical_devices("CPU")[0]
tf.config.set_logical_device_configuration(
    _cpu, [tf.config.LogicalDeviceConfiguration()] * DEVICES)

import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from common import (LABELS, TEXTS, build_task,  # noqa: E402
                    layerwise_fit, layerwise_report, max_diff, time_steps,
                    write_json)
from kzoo import distribution as kd  # noqa: E402

TOKENIZER = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")


# One block, as the jax mesh worker has: MirroredStrategy traces the step
# once per replica, and the checks need no depth (the whole worker took
# 28 s with two blocks, 22 s with one).
CONFIG = {"vocabulary_size": TOKENIZER.vocabulary_size, "num_layers": 1}


def classifier():
    preprocessor = kzoo.BertPreprocessor(TOKENIZER, sequence_length=16)
    return build_task("classifier", preprocessor, config=CONFIG)


def scoped_classifier(strategy):
    with strategy.scope():
        return classifier()


def one_step(strategy, timed):
    if strategy is None:
        task = classifier()
    else:
        with strategy.scope():
            task = classifier()
    # Outside the scope on purpose: the lazy default compile must still
    # land in the task's strategy.
    history = task.fit(TEXTS, LABELS, batch_size=len(TEXTS), epochs=1,
                       shuffle=False, verbose=0)
    weights = task.get_weights()
    step_s = time_steps(task, TEXTS, LABELS) if timed else None
    return task, history.history["loss"][0], weights, step_s


def preset_round_trip(strategy):
    """Inside the scope: load a task preset, save it, load that again, then
    fine-tune it and save the result."""
    with tempfile.TemporaryDirectory() as tmp:
        saved = classifier()
        saved.save_to_preset(f"{tmp}/tiny_classifier")
        with strategy.scope():
            loaded = kzoo.BertTextClassifier.from_preset(
                f"{tmp}/tiny_classifier", num_classes=3)
            same = max_diff(loaded.get_weights(), saved.get_weights())
            mirrored = type(loaded.backbone.weights[0].value).__name__
            loaded.save_to_preset(f"{tmp}/tiny_classifier_again")
            reloaded = kzoo.BertTextClassifier.from_preset(
                f"{tmp}/tiny_classifier_again", num_classes=3)
            round_trip = max_diff(reloaded.get_weights(),
                                  loaded.get_weights())
            reloaded.fit(TEXTS, LABELS, batch_size=len(TEXTS), verbose=0)
            reloaded.save_to_preset(f"{tmp}/tiny_classifier_tuned")
            tuned = kzoo.BertBackbone.from_preset(
                f"{tmp}/tiny_classifier_tuned")
            tuned_diff = max_diff(tuned.get_weights(),
                                  reloaded.backbone.get_weights())
        return {"loaded_diff": same, "round_trip_diff": round_trip,
                "tuned_backbone_diff": tuned_diff, "variable_type": mirrored}


def main(out, timed):
    devices = [d.name for d in tf.config.list_logical_devices("CPU")]
    assert len(devices) == DEVICES, devices
    strategy = kd.strategy(devices=devices)
    single_task, single_loss, single_weights, single_s = one_step(None, timed)
    task, loss, weights, step_s = one_step(strategy, timed)
    report = {
        "devices": DEVICES,
        "strategy": type(strategy).__name__,
        "replicas": strategy.num_replicas_in_sync,
        "default_strategy": type(kd.strategy()).__name__,
        "cached": kd.strategy(devices=devices) is strategy,
        "single_loss": single_loss, "loss": loss,
        "loss_diff": abs(loss - single_loss),
        "weights_diff": max_diff(weights, single_weights),
        "moved": max_diff(single_weights, build_task(
            "classifier", None, CONFIG).get_weights()),
        "predict_diff": float(np.max(np.abs(
            task.predict(TEXTS, verbose=0) -
            single_task.predict(TEXTS, verbose=0)))),
        "single_step_s": single_s, "step_s": step_s,
        "preset": preset_round_trip(strategy),
        "layerwise": layerwise_report(
            layerwise_fit(classifier(), TEXTS, LABELS),
            layerwise_fit(scoped_classifier(strategy), TEXTS, LABELS,
                          strategy.scope())),
    }
    write_json(out, report)


if __name__ == "__main__":
    main(sys.argv[1], "--time" in sys.argv)
