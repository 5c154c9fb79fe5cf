"""Same on every backend: an AWD-LSTM backbone and language model saved on
this backend give the same outputs (<= 1e-5) when loaded on the two
others, and theirs loaded here, through the shared cross-backend worker
(`tests/cross_backend_worker.py`, one subprocess per other backend)."""

import json

import keras
import numpy as np
import pytest

import cross_backend_worker as worker
from awd_lstm_testing import STAND_IN, TINY, padded_inputs
from helpers import austen_paragraphs

pytestmark = pytest.mark.once

OTHERS = [b for b in ("tensorflow", "jax", "torch")
          if b != keras.backend.backend()]
BACKBONE = {"class": "AwdLstmBackbone",
            "config": {**TINY, "vocabulary_size": 1000}}
TASK = {"class": "AwdLstmLanguageModel",
        "task": {"backbone_class": "AwdLstmBackbone",
                 "backbone": BACKBONE["config"],
                 "preprocessor_preset": STAND_IN,
                 "preprocessor": {"sequence_length": 16}}}
TEXTS = austen_paragraphs("pride_and_prejudice",
                          min_words=5)[:3]


def steps(root, backend, inputs):
    """Each model: made and saved on `backend`, and run from here."""
    found = []
    for name, spec in (("bb", BACKBONE), ("lm", TASK)):
        data = {"inputs": str(inputs)} if name == "bb" else {"texts": TEXTS}
        found.append({**spec, **data, "op": "make",
                      "preset": str(root / backend / name),
                      "output": str(root / backend / f"{name}.npz")})
    return found


def arrays(path):
    with np.load(path) as data:
        return {k: data[k] for k in data.files}


@pytest.fixture(scope="module")
def exchange(tmp_path_factory):
    root = tmp_path_factory.mktemp("awd_cross_backend")
    inputs = root / "inputs.npz"
    np.savez(inputs, **padded_inputs(vocabulary_size=1000))
    workers = {}
    for backend in OTHERS:
        (root / backend).mkdir(parents=True)
        job = root / backend / "job.json"
        job.write_text(json.dumps({"seed": 5,
                                   "steps": steps(root, backend, inputs)}))
        workers[backend] = worker.start(backend, job)
    worker.finish(workers, timeout=600)
    return root, inputs


@pytest.mark.parametrize("other", OTHERS)
def test_presets_from_other_backends_give_the_same_outputs(exchange, other):
    root, inputs = exchange
    for name in ("bb", "lm"):
        theirs = arrays(root / other / f"{name}.npz")
        step = {"class": (BACKBONE if name == "bb" else TASK)["class"],
                "preset": str(root / other / name),
                "output": str(root / f"here_{other}_{name}.npz")}
        step.update({"inputs": str(inputs)} if name == "bb"
                    else {"texts": TEXTS})
        here = worker.run(step)
        weights = [k for k in theirs if k.startswith("weight/")]
        assert weights and all(np.array_equal(here[k], theirs[k])
                               for k in weights)
        outputs = [k for k in theirs if k.startswith("out/")]
        assert outputs
        for key in outputs:
            worst = np.abs(here[key] - theirs[key]).max()
            assert worst <= 1e-5, f"{other} {name} {key}: {worst}"
