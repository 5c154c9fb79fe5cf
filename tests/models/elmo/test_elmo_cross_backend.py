"""Same on every backend: the original ELMo weights, converted to a preset
on this backend, give the same outputs on the two others (<= 1e-5), and a
preset converted there loads and runs the same here. The others run in
subprocesses (`tests/cross_backend_worker.py`), started together."""

import json

import keras
import numpy as np
import pytest

import cross_backend_worker as worker
import kzoo
from elmo_testing import ELMO_DIR, character_batch, original_sentences

pytestmark = pytest.mark.once

BACKENDS = ("tensorflow", "jax", "torch")
THIS = keras.backend.backend()
OTHERS = [b for b in BACKENDS if b != THIS]


def test_original_weights_same_on_every_backend(tmp_path):
    inputs = tmp_path / "inputs.npz"
    sentences = original_sentences()
    np.savez(inputs, **character_batch(
        [sentences[0][0], sentences[1][1], sentences[2][3]], 54))
    kzoo.convert.hf_to_preset(ELMO_DIR, tmp_path / THIS, verbose=False)
    mine = worker.run({"class": "ElmoBackbone", "preset": str(tmp_path / THIS),
                       "inputs": str(inputs),
                       "output": str(tmp_path / "mine.npz")})
    workers = {}
    for backend in OTHERS:
        job = tmp_path / f"{backend}.json"
        # Run this backend's preset there, then convert one there.
        job.write_text(json.dumps({"steps": [
            {"op": "run", "class": "ElmoBackbone",
             "preset": str(tmp_path / THIS), "inputs": str(inputs),
             "output": str(tmp_path / f"{backend}_run.npz")},
            {"op": "convert", "source": str(ELMO_DIR),
             "preset": str(tmp_path / backend)}]}))
        workers[backend] = worker.start(backend, job)
    worker.finish(workers, timeout=900)
    for backend in OTHERS:
        with np.load(tmp_path / f"{backend}_run.npz") as theirs:
            for key, value in mine.items():
                if key.startswith("out/"):
                    difference = np.max(np.abs(theirs[key] - value))
                    print(f"\n{THIS} preset on {backend}: {key} max abs "
                          f"{difference:.2e}")
                    assert difference <= 1e-5, (backend, key, difference)
        there = worker.run({"class": "ElmoBackbone",
                            "preset": str(tmp_path / backend),
                            "inputs": str(inputs),
                            "output": str(tmp_path / f"from_{backend}.npz")})
        for key, value in mine.items():
            np.testing.assert_allclose(there[key], value, atol=1e-5,
                                       err_msg=f"preset from {backend}")
