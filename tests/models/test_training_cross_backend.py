"""Same on every backend, forward and training: every registered task (but
ELECTRA's pretrainer, which samples inside its step), from one set of
weights and one batch as `fit` prepares it, gives the same outputs and
takes the same SGD step on TensorFlow, JAX and PyTorch: every output
agrees within 1e-5 (relative to its largest value, at least 1), the loss
and every weight after the step within 1e-5, and each weight's change
within 1% of its tensor's largest change.

This is also what lets parity with `transformers` run in one backend's
pass only (the tests of tests/convert are marked `once`): the parity
tests hold one backend to the original, and this file holds the
others to the first, output for output.

This is what lets the long "the loss falls on real text" tests (marked
`convergence`) run in one backend's pass only: the layers, losses and
preprocessing they train are the same code everywhere, and this checks
that each backend's gradients and updates through that code agree.
(The optimizers are checked on every backend by tests/training.)

Dropout is off (its random draws are each backend's own) and the batch is
prepared here once (random masks too). The two other backends run in one
subprocess each (`tests/cross_backend_worker.py`, op "train"), started
together.
"""

import inspect
import json

import keras
import numpy as np
import pytest

import cross_backend_worker as worker
from helpers import to_numpy
from kzoo.core.task import InMemoryBatches, Task
from text_testing import (TEXTS, example_labels, example_texts, make_task,
                          params, task_backbone_cls, tiny_backbone)

pytestmark = pytest.mark.once

THIS = keras.backend.backend()
OTHERS = [b for b in ("tensorflow", "jax", "torch") if b != THIS]
EPOCHS = 1
LEARNING_RATE = 0.1
ATOL = 1e-5

# Tasks whose training step itself draws random numbers (beyond dropout),
# from each backend's own generator: their steps cannot agree.
RANDOM_IN_THE_STEP = {
    "ElectraPretrainer": "samples replacements from the generator",
}


# Weights whose gradient passes a max-pool over exact ties (the identical
# windows of a word's padding characters): each backend gives the
# gradient of a tie to a different position, so only ATOL applies.
TIED_MAXIMA = ("character_cnn/embeddings",)


TASKS = [param for param in params(Task)
         if param.values[0].__name__ not in RANDOM_IN_THE_STEP]


def _without_dropout(task_cls):
    """The task on a tiny backbone with every dropout rate at zero (the
    backbone's config and the task's own arguments)."""
    backbone = tiny_backbone(task_backbone_cls(task_cls), dropout=0.0)
    rates = {name: 0.0 for name in inspect.signature(task_cls).parameters
             if "dropout" in name}
    task = make_task(task_cls, backbone=backbone, **rates)
    for layer in task._flatten_layers(include_self=True):
        for name, value in vars(layer).items():
            dropout_rate = "dropout" in name or (
                name == "rate" and isinstance(layer, keras.layers.Dropout))
            assert not (dropout_rate and isinstance(value, float) and
                        value > 0), f"{layer.name}.{name} = {value}"
    return task


def _one_batch(task):
    """One batch as `fit` prepares it from raw examples (preprocessor,
    masks, the task's own `adapt_batches`): (x, y, sample_weight), with
    Nones."""
    name = type(task).__name__
    kind = type(task.preprocessor)
    raw, labels = example_texts(kind), example_labels(kind)
    # An embedder learns target vectors: random ones, of its outputs' shape
    # (added below).
    targets = isinstance(task.default_compile_args()["loss"],
                         keras.losses.MeanSquaredError)
    if targets:
        labels = None
    if name == "QuestionAnswerer":  # answers: spans of the contexts
        contexts = list(TEXTS)
        raw = (["Which is the last word?"] * len(contexts), contexts)
        labels = [{"text": c.split()[-1], "answer_start": c.rindex(" ") + 1}
                  for c in contexts]
    if name == "ElectraDiscriminator":  # labels are per token, added below
        labels = None
    batches = task._make_dataset(raw, labels, batch_size=len(TEXTS))
    if isinstance(batches, InMemoryBatches):
        data = batches.data
    else:
        data = next(iter(batches))
    x, y, sample_weight = keras.utils.unpack_x_y_sample_weight(
        to_numpy(data))
    if name == "ElectraDiscriminator":  # "replaced" flags, one per token
        y = (x["token_ids"] % 2).astype("float32")
    if targets:
        shape = keras.ops.shape(task(x))
        y = np.random.default_rng(0).normal(size=shape).astype("float32")
    return x, y, sample_weight


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    """Each task trained here and on both other backends."""
    root = tmp_path_factory.mktemp("training_cross_backend")
    steps, mine, before = [], {}, {}
    for param in TASKS:
        task_cls = param.values[0]
        name = task_cls.__name__
        task = _without_dropout(task_cls)
        x, y, sample_weight = _one_batch(task)
        arrays = worker.pack("x", x, {})
        if y is not None:
            worker.pack("y", y, arrays)
        if sample_weight is not None:
            worker.pack("sample_weight", sample_weight, arrays)
        np.savez(root / f"{name}.npz", **arrays)
        # Saved without its preprocessor (the batch is prepared already):
        # each side loads every task, and building their tokenizers took
        # a third of the loading (tests/models/test_keras_saving.py saves
        # tasks whole).
        task.preprocessor = None
        task.save(root / f"{name}.keras")
        before[name] = {f"weight/{w.path}": keras.ops.convert_to_numpy(w)
                        for w in task.weights}
        step = {"op": "train", "model": str(root / f"{name}.keras"),
                "data": str(root / f"{name}.npz"), "epochs": EPOCHS,
                "learning_rate": LEARNING_RATE}
        steps.append((name, step))

    workers = {}
    for backend in OTHERS:
        (root / backend).mkdir()
        job = root / backend / "job.json"
        job.write_text(json.dumps({"seed": 3, "steps": [
            {**step, "output": str(root / backend / f"{name}.npz")}
            for name, step in steps]}))
        workers[backend] = worker.start(backend, job)
    try:
        for name, step in steps:
            mine[name] = worker.train(
                {**step, "output": str(root / f"{name}.{THIS}.npz")})
    finally:
        worker.finish(workers, timeout=900)
    return root, mine, before


def test_only_named_tasks_are_left_out():
    registered = {param.values[0].__name__ for param in params(Task)}
    assert set(RANDOM_IN_THE_STEP) <= registered


@pytest.mark.parametrize("other", OTHERS)
def test_forward_outputs_agree(exchange, other):
    """Every output of every task, in inference mode, before the step."""
    root, mine, _ = exchange
    failures = []
    for name, ours in mine.items():
        with np.load(root / other / f"{name}.npz") as data:
            theirs = {k: data[k] for k in data.files if k.startswith("out/")}
        outputs = {k: v for k, v in ours.items() if k.startswith("out/")}
        assert outputs and sorted(theirs) == sorted(outputs), name
        for key, value in outputs.items():
            scale = max(1.0, float(np.max(np.abs(value))))
            difference = float(np.max(np.abs(theirs[key] - value)))
            if difference > ATOL * scale:
                failures.append(f"{name} {key}: max |diff| {difference:.1e}"
                                f" (largest value {scale:.1e})")
    assert not failures, f"{THIS} vs {other}:\n" + "\n".join(failures)


@pytest.mark.parametrize("other", OTHERS)
def test_one_sgd_step_agrees(exchange, other):
    """Each weight after the step agrees within ATOL, and its change
    within 1% of the tensor's largest change (a small update, such as a
    multiple-choice head's first step, is compared at its own scale)."""
    root, mine, before = exchange
    failures = []
    for name, ours in mine.items():
        with np.load(root / other / f"{name}.npz") as data:
            theirs = {k: data[k] for k in data.files}
        assert sorted(theirs) == sorted(ours), name
        loss_difference = np.max(np.abs(theirs["loss"] - ours["loss"]))
        if loss_difference > ATOL * (1 + np.max(np.abs(ours["loss"]))):
            failures.append(f"{name} losses: {ours['loss']} here, "
                            f"{theirs['loss']} there")
        # The step moved the weights (a step that changed nothing would
        # agree trivially).
        moves = {key: np.abs(ours[key] - value)
                 for key, value in before[name].items()}
        assert max(float(np.max(m)) for m in moves.values()) > 1e-6, name
        for key, move in moves.items():
            difference = float(np.max(np.abs(theirs[key] - ours[key])))
            tolerance = ATOL if key.endswith(TIED_MAXIMA) else \
                min(ATOL, 1e-2 * float(np.max(move)) + 1e-7)
            if difference > tolerance:
                failures.append(f"{name} {key}: max |diff| {difference:.1e}"
                                f" (largest change {np.max(move):.1e})")
    assert not failures, f"{THIS} vs {other}:\n" + "\n".join(failures)
