"""Tiny models and data shared by the distribution workers (run as scripts
in subprocesses, so the backend and device count are set before import)."""

import json
import time

import keras
import numpy as np

import kzoo

CONFIG = dict(vocabulary_size=128, num_layers=2, num_heads=4, hidden_dim=32,
              intermediate_dim=64, max_sequence_length=16, dropout=0.0,
              attention_dropout=0.0)
BATCH, SEQ, MASKS = 8, 12, 3


def backbone_class(kind):
    return kzoo.GPT2Backbone if kind == "causal_lm" else kzoo.BertBackbone


def task_kinds():
    """Every task kind the workers cover: one per head shape and family."""
    return ("classifier", "masked_lm", "causal_lm")


def build_task(kind, preprocessor=None, config=None):
    """A freshly built tiny task, with deterministic initial weights (the
    same numbers on every backend, process and distribution)."""
    keras.utils.set_random_seed(1234)
    config = {**CONFIG, **(config or {})}
    if kind == "causal_lm":
        config.pop("num_segments", None)
        backbone = kzoo.GPT2Backbone(**config)
        task = kzoo.GPT2CausalLM(backbone, preprocessor=preprocessor)
    elif kind == "classifier":
        backbone = kzoo.BertBackbone(**config)
        task = kzoo.BertTextClassifier(backbone, num_classes=3,
                                       preprocessor=preprocessor, dropout=0.0)
    else:
        backbone = kzoo.BertBackbone(**config)
        task = kzoo.BertMaskedLM(backbone, preprocessor=preprocessor)
    rng = np.random.default_rng(7)
    task.set_weights([rng.normal(0, 0.05, w.shape).astype("float32")
                      for w in task.get_weights()])
    return task


def batch(kind, size=BATCH):
    """Model-input arrays and labels for one global batch."""
    rng = np.random.default_rng(3)
    x = {
        "token_ids": rng.integers(1, CONFIG["vocabulary_size"], (size, SEQ)),
        "segment_ids": np.zeros((size, SEQ), "int32"),
        "padding_mask": np.ones((size, SEQ), "int32"),
    }
    x["padding_mask"][::2, -3:] = 0
    x = {k: v.astype("int32") for k, v in x.items()}
    if kind == "causal_lm":
        del x["segment_ids"]
        y = np.roll(x["token_ids"], -1, axis=1)
        return x, y
    if kind == "classifier":
        return x, rng.integers(0, 3, (size,)).astype("int32")
    x["mask_positions"] = np.tile(np.arange(1, 1 + MASKS), (size, 1)).astype(
        "int32")
    return x, rng.integers(1, CONFIG["vocabulary_size"],
                           (size, MASKS)).astype("int32")


TEXTS = [
    "It is a truth universally acknowledged.",
    "A single man in possession of a good fortune.",
    "Must be in want of a wife.",
    "However little known the feelings may be.",
    "The neighbourhood was in a great bustle.",
    "My dear Mr. Bennet, said his lady to him one day.",
    "Have you heard that Netherfield Park is let at last?",
    "Mr. Bennet replied that he had not.",
]
LABELS = [0, 1, 2, 0, 1, 2, 0, 1]


class StepTimer(keras.callbacks.Callback):
    """Seconds per training step, read at each batch's end (reading the
    loss waits for asynchronous backends to finish the step)."""

    def __init__(self):
        super().__init__()
        self.seconds = []

    def on_train_batch_begin(self, batch, logs=None):
        self._start = time.perf_counter()

    def on_train_batch_end(self, batch, logs=None):
        float(np.asarray((logs or {}).get("loss", 0.0)))
        self.seconds.append(time.perf_counter() - self._start)

    def median(self):
        """The median step after the first (which compiles)."""
        return float(np.median(self.seconds[1:]))


def time_steps(task, x, y, steps=11):
    """Median seconds per step of `task.fit` over `steps` batches of `x`."""
    timer = StepTimer()
    repeat = lambda a: (  # noqa: E731
        {k: np.concatenate([v] * steps) for k, v in a.items()}
        if isinstance(a, dict) else
        list(a) * steps if isinstance(a, list) else
        np.concatenate([a] * steps))
    task.fit(repeat(x), repeat(y), batch_size=len(y), epochs=1,
             shuffle=False, verbose=0, callbacks=[timer])
    return timer.median()


def write_json(path, payload):
    with open(path, "w") as f:
        json.dump(payload, f)


def max_diff(a, b):
    return float(max(np.max(np.abs(np.asarray(x) - np.asarray(y)))
                     for x, y in zip(a, b)))



def layerwise_fit(task, x, y, scope=None):
    """Two epochs of one batch each with discriminative learning rates and
    gradual unfreezing (`LayerwiseAdamW`, `GradualUnfreezing`), the
    optimizer made inside `scope` (a strategy's or a distribution's).
    Returns the layer groups each epoch moved and the final weights."""
    import contextlib

    from kzoo.training import GradualUnfreezing, LayerwiseAdamW, layer_groups
    with scope or contextlib.nullcontext():
        task.compile(optimizer=LayerwiseAdamW(
            1e-3, layer_groups=layer_groups(task), decay=0.5))
    variables = task.trainable_variables
    before = [np.array(v) for v in variables]
    moved_groups = []
    for epoch in range(2):
        task.fit(x, y, batch_size=len(y), initial_epoch=epoch,
                 epochs=epoch + 1, shuffle=False, verbose=0,
                 callbacks=[GradualUnfreezing()])
        after = [np.array(v) for v in variables]
        moved_groups.append(sorted({
            task.optimizer.group_of(v) for v, old, new in
            zip(variables, before, after) if np.any(old != new)}))
        before = after
    return {"groups": len(task.optimizer.layer_groups),
            "moved_groups": moved_groups, "weights": task.get_weights()}


def layerwise_report(single, distributed):
    """`layerwise_fit` under a distribution against a single device."""
    return {"groups": single["groups"],
            "single_moved_groups": single["moved_groups"],
            "moved_groups": distributed["moved_groups"],
            "weights_diff": max_diff(distributed["weights"],
                                     single["weights"])}
