"""`kzoo pretrain` on many processes (issue 32, item 4): the same command
under scripts/launch.py, each process making only its rows of each global
batch (`BatchStream(process_index, process_count)`), fed to its backend's
engine (kzoo/pretraining/engines.py).

- Stream level (`once`, no model): two processes' rows together are the
  1-process batch with `draw_groups=2`, and over one pass they see every
  sentence of the corpus exactly once.
- End to end, per backend, in that backend's pass (as tests/distribution):
  a 2-process run launched with scripts/launch.py equals a 1-process run
  with the same global batch and `--draw-groups 2`: per-step losses and
  final weights within 1e-5. Dropout is off for that comparison: every
  process has its own dropout generator, so two processes draw other
  dropout masks than one does (the rate is the same, the numbers are not).
"""

import json
import sys
import time
from pathlib import Path

import keras
import numpy as np
import pytest

import pretraining_testing

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "distribution"))
from distribution_support import LAUNCH, finish, start, worker_env  # noqa

from kzoo.pretraining import checkpoints  # noqa: E402

SCRIPT = Path(pretraining_testing.__file__).resolve()
TOLERANCE = 1e-5
STEPS = 4
FLAGS = ["--objective", "tiny_mlm", "--from-scratch", "--max-steps",
         str(STEPS), "--batch-size", "4", "--sequence-length", "32",
         "--checkpoint-every", "2", "--learning-rate", "1e-3",
         "--warmup-steps", "1", "--seed", "5", "--quiet"]


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A dropout-free tiny BERT preset and its corpus."""
    root = tmp_path_factory.mktemp("distributed_pretraining")
    preset = pretraining_testing.make_preset(root / "preset")
    config_path = preset / "config.json"
    config = json.loads(config_path.read_text())
    config["config"].update(dropout=0.0, attention_dropout=0.0)
    config_path.write_text(json.dumps(config, indent=2))
    corpus = pretraining_testing.make_corpus(root / "corpus", preset)
    return root, preset, corpus


# --- the stream's row split (no model) ------------------------------------

def _identified_stream():
    from kzoo.pretraining.streams.base import BatchStream

    class Identified(BatchStream):
        """Each example is the (epoch, document, sentence) it read."""

        def next_example(self):
            _, document, sentence, _ = self.walk.next_sentence()
            return self.walk.epoch, document, sentence

        def finish(self, examples, seed):
            draws = np.random.default_rng(seed).integers(0, 1 << 30,
                                                         len(examples))
            return np.array(examples), draws, None

    return Identified


@pytest.mark.once
def test_two_processes_split_each_batch_and_see_each_sentence_once(tiny):
    from kzoo.corpus import Corpus
    _, _, corpus_folder = tiny
    corpus = Corpus(corpus_folder)
    Identified = _identified_stream()
    batch = 4
    sentences = sum(s.record["sentences"] for s in corpus.shards)
    steps = -(-sentences // batch) + 1  # past the end of the first pass
    single = Identified(corpus, batch, seed=3, draw_groups=2)
    ranks = [Identified(corpus, batch, seed=3, process_index=r,
                        process_count=2) for r in range(2)]
    seen = []
    for step in range(steps):
        ids, draws, _ = single.batch(step)
        parts = [rank.batch(step) for rank in ranks]
        assert all(len(p[0]) == batch // 2 for p in parts)
        # Together the two processes make the 1-process batch, rows and
        # draws (draw_groups=2 on one process = 2 processes).
        np.testing.assert_array_equal(
            np.concatenate([p[0] for p in parts]), ids)
        np.testing.assert_array_equal(
            np.concatenate([p[1] for p in parts]), draws)
        seen += [tuple(row) for p in parts for row in p[0]]
    first_pass = [(d, s) for e, d, s in seen if e == 0]
    assert len(first_pass) == len(set(first_pass)) == sentences
    assert all(r.state() == single.state() for r in ranks)  # global walk


# --- a 2-process run = a 1-process run (each backend's pass) ---------------

def losses(output):
    lines = (Path(output) / checkpoints.METRICS).read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["step"]: r["loss"] for r in records if "loss" in r}


def final_weights(output):
    step, folder = checkpoints.list_checkpoints(output)[-1]
    assert step == STEPS
    with np.load(folder / "variables.npz") as data:
        return [data[key].astype(np.float64) for key in sorted(data)]


def test_tensorflow_strategies_are_refused_with_the_way_out(monkeypatch):
    """Several TensorFlow workers or devices are refused, naming the
    backends that run it (kzoo/pretraining/engines.py says why)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("runs in the tensorflow pass of the suite")
    import tensorflow as tf

    from kzoo import distribution
    from kzoo.pretraining.engines import Engine
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
    monkeypatch.setattr(distribution, "strategy", lambda: mirrored)
    with pytest.raises(ValueError, match="jax or torch backend"):
        Engine().setup()


@pytest.mark.parametrize("backend", ["jax", "torch"])
def test_two_processes_train_what_one_process_trains(tiny, backend):
    if keras.backend.backend() != backend:
        pytest.skip(f"runs in the {backend} pass of the suite")
    root, preset, corpus = tiny
    one, two = root / f"one_{backend}", root / f"two_{backend}"
    command = [SCRIPT, "pretrain", preset, corpus]
    env = worker_env(backend)
    began = time.perf_counter()
    single = start(command + [one] + FLAGS + ["--draw-groups", "2"], env)
    launched = start([LAUNCH, "--backend", backend, "--processes", "2",
                      "--timeout", "400"] + command + [two] + FLAGS, env)
    output = finish(launched, 420)
    finish(single, 420)
    seconds = time.perf_counter() - began
    got, want = losses(two), losses(one)
    assert sorted(got) == sorted(want) == list(range(1, STEPS + 1))
    loss_diff = max(abs(got[s] - want[s]) for s in want)
    weights, reference = final_weights(two), final_weights(one)
    assert len(weights) == len(reference)
    weight_diff = max(float(np.max(np.abs(a - b))) if a.size else 0.0
                      for a, b in zip(weights, reference))
    # How far training moved the float variables (not the step counters)
    # between the two checkpoints.
    moved = max(float(np.max(np.abs(a - b))) if a.size else 0.0
                for a, b, f in zip(weights, final_weights_at_start(one),
                                   float_kinds(one)) if f)
    print(f"{backend}: 2 processes vs 1: max |loss diff| {loss_diff:.3g}, "
          f"max |weight diff| {weight_diff:.3g} (moved {moved:.3g}); "
          f"{seconds:.0f} s")
    assert moved > 10 * TOLERANCE
    assert loss_diff <= TOLERANCE and weight_diff <= TOLERANCE
    # Only process 0 wrote OUTPUT: one run's files, each checkpoint once.
    assert "pretrained 4 steps" in output
    assert [s for s, _ in checkpoints.list_checkpoints(two)] == [2, 4]


def final_weights_at_start(output):
    """The first checkpoint's weights (to show training moved them)."""
    step, folder = checkpoints.list_checkpoints(output)[0]
    with np.load(folder / "variables.npz") as data:
        return [data[key].astype(np.float64) for key in sorted(data)]


def float_kinds(output):
    """Which saved variables are floating point, in `final_weights`'
    order."""
    _, folder = checkpoints.list_checkpoints(output)[-1]
    with np.load(folder / "variables.npz") as data:
        return [data[key].dtype.kind == "f" for key in sorted(data)]
