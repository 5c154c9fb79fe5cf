"""Same on every backend: one weights file gives the same outputs on
TensorFlow, JAX and PyTorch (<= 1e-5), and a preset saved on one backend
loads on the others.

The suite runs on one backend (KERAS_BACKEND); the two others run in one
subprocess each (`tests/cross_backend_worker.py`), started together. Each
subprocess (a) runs the presets this backend saved and (b) saves presets
of its own, which this backend then loads and runs.
"""

import json

import keras
import numpy as np
import pytest

import cross_backend_worker as worker
from helpers import TINY_BERT, austen_paragraphs, random_bert_inputs

# This backend and the two others (in subprocesses): one pass covers all
# three.
pytestmark = pytest.mark.once

BACKENDS = ("tensorflow", "jax", "torch")
THIS = keras.backend.backend()
OTHERS = [b for b in BACKENDS if b != THIS]
ATOL = 1e-5
VOCAB = 30522

BACKBONE = {"class": "BertBackbone",
            "config": {"vocabulary_size": VOCAB, **TINY_BERT}}
TASK = {"class": "BertTextClassifier",
        "task": {"backbone_class": "BertBackbone",
                 "backbone": {"vocabulary_size": VOCAB, **TINY_BERT},
                 "preprocessor_preset": "bert_base_en_uncased",
                 "preprocessor": {"sequence_length": 24},
                 "kwargs": {"num_classes": 3}}}


def texts():
    return austen_paragraphs("pride_and_prejudice", min_words=5)[:4]


def outputs_of(arrays):
    return {k: v for k, v in arrays.items() if k.startswith("out/")}


def weights_of(arrays):
    return {k: v for k, v in arrays.items() if k.startswith("weight/")}


def load(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    """Presets and outputs from this backend and from both others."""
    root = tmp_path_factory.mktemp("cross_backend")
    inputs = root / "inputs.npz"
    np.savez(inputs, **random_bert_inputs(batch=3, seq=20, seed=1))

    keras.utils.set_random_seed(7)
    mine = {
        "backbone": worker.make({**BACKBONE, "preset": str(root / THIS / "bb"),
                                 "inputs": str(inputs),
                                 "output": str(root / THIS / "bb.npz")}),
        "task": worker.make({**TASK, "preset": str(root / THIS / "task"),
                             "texts": texts(),
                             "output": str(root / THIS / "task.npz")}),
    }

    workers = {}
    for backend in OTHERS:
        steps = [
            # (a) this backend's presets, run there
            {"op": "run", "class": BACKBONE["class"],
             "preset": str(root / THIS / "bb"), "inputs": str(inputs),
             "output": str(root / backend / "run_bb.npz")},
            {"op": "run", "class": TASK["class"],
             "preset": str(root / THIS / "task"), "texts": texts(),
             "output": str(root / backend / "run_task.npz")},
            # (b) presets saved there
            {**BACKBONE, "op": "make", "preset": str(root / backend / "bb"),
             "inputs": str(inputs), "output": str(root / backend / "bb.npz")},
            {**TASK, "op": "make", "preset": str(root / backend / "task"),
             "texts": texts(), "output": str(root / backend / "task.npz")},
        ]
        (root / backend).mkdir(parents=True, exist_ok=True)
        job = root / backend / "job.json"
        job.write_text(json.dumps({"seed": 11, "steps": steps}))
        workers[backend] = worker.start(backend, job)
    worker.finish(workers, timeout=600)
    return root, inputs, mine


def assert_outputs_close(actual, expected, what):
    assert sorted(actual) == sorted(expected), what
    for key in expected:
        assert actual[key].shape == expected[key].shape, (what, key)
        difference = np.max(np.abs(actual[key] - expected[key]))
        assert difference <= ATOL, f"{what} {key}: max |diff| {difference}"


@pytest.mark.parametrize("other", OTHERS)
def test_same_weights_same_outputs(exchange, other):
    root, _, mine = exchange
    for name in ("bb", "task"):
        theirs = load(root / other / f"run_{name}.npz")
        # The weights arrived bit for bit...
        ours = weights_of(mine["backbone" if name == "bb" else "task"])
        for key, value in ours.items():
            assert np.array_equal(theirs[key], value), (other, key)
        # ...and give the same outputs there as here.
        assert_outputs_close(
            outputs_of(theirs),
            outputs_of(mine["backbone" if name == "bb" else "task"]),
            f"{THIS} preset run on {other}:")


@pytest.mark.parametrize("other", OTHERS)
def test_preset_saved_on_another_backend_loads_here(exchange, other):
    root, inputs, _ = exchange
    for name, spec in (("bb", BACKBONE), ("task", TASK)):
        saved_there = load(root / other / f"{name}.npz")
        step = {"class": spec["class"], "preset": str(root / other / name),
                "output": str(root / THIS / f"from_{other}_{name}.npz")}
        if name == "bb":
            step["inputs"] = str(inputs)
        else:
            step["texts"] = texts()
        here = worker.run(step)
        assert weights_of(here).keys() == weights_of(saved_there).keys()
        for key, value in weights_of(saved_there).items():
            assert np.array_equal(here[key], value), (other, key)
        assert_outputs_close(outputs_of(here), outputs_of(saved_there),
                             f"{other} preset run on {THIS}:")


def test_backends_really_differ(exchange):
    # Guard: each backend initialised its own random weights, so the
    # comparisons above compared real computations, not copies.
    root, _, mine = exchange
    for other in OTHERS:
        theirs = weights_of(load(root / other / "bb.npz"))
        ours = weights_of(mine["backbone"])
        key = next(k for k in ours if "token_embedding" in k)
        assert not np.array_equal(theirs[key], ours[key])
