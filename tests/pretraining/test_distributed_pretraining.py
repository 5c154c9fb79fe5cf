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
  final weights within 1e-6, with BERT's clip (1.0) and rows carrying 1
  to 4 masks (each process' share of a step its own count). Dropout is off for that comparison: every
  process has its own dropout generator, so two processes draw other
  dropout masks than one does (the rate is the same, the numbers are not).
  On TensorFlow the processes run MultiWorkerMirroredStrategy; and in one
  process MirroredStrategy over 2 devices (logical CPUs), killed after
  its first checkpoint and resumed, equals the 1-process run too.
- On JAX in one process, `--model-parallel 2` over 2 virtual CPU devices
  (1 data x 2 model: keras.distribution ModelParallel, the backbone's
  layout rules) equals the 1-device run of the same command, and the
  weights really lie split over the 2 devices.
- TensorFlow's feed: every iterator of the distributed dataset starts at
  the run's next batch (Keras' `fit` makes two).
"""

import json
import os
import signal
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
TOLERANCE = 1e-6
# backend -> the 1-process run a 2-process test made (the mirrored test
# compares with it rather than train it again).
ONE_PROCESS_RUNS = {}
STEPS = 4
# BERT's recipe (clip 1.0), and rows with 1 to 4 masks each: each
# process' share of a step holds its own number of masked tokens, and
# the loss is the step's mean over all of them (kzoo/training/
# global_loss.py), the clip that of the step's gradient (global_clip.py).
FLAGS = ["--objective", "tiny_mlm_uneven", "--from-scratch", "--max-steps",
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


def test_tensorflow_strategy_feed_starts_each_iterator_at_the_run(
        tiny, monkeypatch):
    """Under a tf.distribute strategy `fit` is given a distributed dataset
    each of whose iterators starts at the run's next batch: Keras' `fit`
    builds the model from one batch of a first iterator, drops it and
    trains from a second (kzoo/pretraining/engines.py, `feed`). Over one
    shared generator the second started late and ended when the first
    was finalized, which is why such runs were refused before."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("runs in the tensorflow pass of the suite")
    import gc
    import threading

    import tensorflow as tf

    from kzoo import distribution
    from kzoo.corpus import Corpus
    from kzoo.pretraining.engines import Engine
    from kzoo.pretraining.run import Run
    mirrored = tf.distribute.MirroredStrategy(["/cpu:0"])
    monkeypatch.setattr(distribution, "strategy", lambda: mirrored)
    engine = Engine()
    engine.setup()
    assert engine.strategy is mirrored
    Identified = _identified_stream()

    class Weighted(Identified):  # (x, y, sample_weight), as a run's
        def finish(self, examples, seed):
            ids, draws, _ = super().finish(examples, seed)
            return ids, draws, np.ones(len(ids), np.float32)

    corpus = Corpus(tiny[2])
    run = Run.__new__(Run)  # the three attributes `_batches` reads
    run.stream, run.feed_lock = Weighted(corpus, 4, seed=3), threading.Lock()
    run.real_tokens = {}  # each batch's real tokens, for throughput
    resumed_at, steps = 3, 20
    for step in range(resumed_at):
        run.stream.batch(step)
    dataset = engine.feed(run._batches(resumed_at))
    first = iter(dataset)
    next(first)
    del first
    gc.collect()
    reference = Weighted(corpus, 4, seed=3)
    want = [reference.batch(step) for step in range(resumed_at + steps)]
    second = iter(dataset)
    local = lambda value: mirrored.experimental_local_results(value)[0]  # noqa
    for step in range(resumed_at, resumed_at + steps):
        got = next(second)
        for part in range(3):
            np.testing.assert_array_equal(local(got[part]).numpy(),
                                          want[step][part])


@pytest.mark.parametrize("backend", ["jax", "torch", "tensorflow"])
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
    compare(two, one, f"{backend}: 2 processes vs 1", seconds)
    # Only process 0 wrote OUTPUT: one run's files, each checkpoint once.
    assert "pretrained 4 steps" in output
    assert [s for s, _ in checkpoints.list_checkpoints(two)] == [2, 4]
    ONE_PROCESS_RUNS[backend] = one


def test_mirrored_strategy_resumes_and_trains_what_one_process_trains(
        tiny):
    """`kzoo pretrain` under MirroredStrategy (one process, 2 devices:
    here 2 logical CPUs, as pretraining_testing's KZOO_TEST_LOGICAL_CPUS
    makes them), killed after its first checkpoint and run again with
    the same command, equals the 1-process run (`--draw-groups 2` in
    both: the same batches and masks)."""
    if keras.backend.backend() != "tensorflow":
        pytest.skip("runs in the tensorflow pass of the suite")
    root, preset, corpus = tiny
    mirrored = root / "mirrored"
    command = [SCRIPT, "pretrain", preset, corpus, mirrored] + FLAGS + [
        "--draw-groups", "2"]
    began = time.perf_counter()
    single = None
    one = ONE_PROCESS_RUNS.get("tensorflow")
    if one is None:  # the 2-process test did not run before this one
        one = root / "one_mirrored"
        single = start(command[:4] + [one] + command[5:],
                       worker_env("tensorflow"))
    env = worker_env("tensorflow", KZOO_TEST_LOGICAL_CPUS="2",
                     KZOO_TEST_PAUSE_AFTER_CHECKPOINT="2")
    paused = start(command, env)
    first = mirrored / checkpoints.CHECKPOINTS / "step-000000002"
    deadline = time.time() + 300
    while not first.exists() and paused.poll() is None and \
            time.time() < deadline:
        time.sleep(0.05)
    # Paused once checkpoint 2 is written (pretraining_testing): killed
    # between two checkpoints.
    os.killpg(paused.pid, signal.SIGKILL)
    output = paused.communicate()[0]
    assert "MirroredStrategy, 2 replicas" in output, output[-2000:]
    assert [s for s, _ in checkpoints.list_checkpoints(mirrored)] == [2], \
        output[-2000:]
    env.pop("KZOO_TEST_PAUSE_AFTER_CHECKPOINT")
    output = finish(start(command, env), 300)
    if single is not None:
        finish(single, 300)
    assert "resumed from step 2" in output, output[-2000:]
    compare(mirrored, one, "tensorflow: MirroredStrategy (2 devices, "
            "killed and resumed) vs 1 process", time.perf_counter() - began)
    assert [s for s, _ in checkpoints.list_checkpoints(mirrored)] == [2, 4]


def test_jax_model_parallel_trains_what_one_device_trains(tiny):
    """`kzoo pretrain --model-parallel 2` on 2 virtual CPU devices
    (XLA_FLAGS, as tests/distribution/test_distribution_jax.py makes 8):
    a 1 data x 2 model mesh, the backbone's weights split by its layout
    rules. Its per-step losses and final weights equal the 1-device run's
    (the same command without the flag, on 1 device), it trains
    max_steps, and the live variables are split over both devices
    (pretraining_testing's KZOO_TEST_REPORT_SHARDING)."""
    if keras.backend.backend() != "jax":
        pytest.skip("runs in the jax pass")
    root, preset, corpus = tiny
    one, sharded = root / "one_device_jax", root / "model_parallel_jax"
    command = [SCRIPT, "pretrain", preset, corpus]
    began = time.perf_counter()
    single = start(command + [one] + FLAGS, worker_env("jax"))
    parallel = start(command + [sharded] + FLAGS + ["--model-parallel", "2"],
                     worker_env(
                         "jax", KZOO_TEST_REPORT_SHARDING="1",
                         cpu_devices=2))
    output = finish(parallel, 300)
    finish(single, 300)
    seconds = time.perf_counter() - began
    compare(sharded, one, "jax: model_parallel=2 (1 data x 2 model, 2 "
            "virtual CPUs) vs 1 device", seconds)
    assert "pretrained 4 steps" in output, output[-2000:]
    assert [s for s, _ in checkpoints.list_checkpoints(sharded)] == [2, 4]
    reports = [json.loads(line[len("sharding: "):])
               for line in output.splitlines()
               if line.startswith("sharding: ")]
    assert [r["step"] for r in reports] == [2, 4], output[-2000:]
    report = reports[-1]
    assert report["distribution"] == "ModelParallel"
    assert report["mesh"] == [1, 2]
    split = report["sharded"]
    # The layout rules' column kernels (q/k/v, FFN in) are split by
    # output column, the row kernels (attention out, FFN out) by input
    # row, each half on one of the 2 devices.
    query = [p for p in split if p.endswith(
        "transformer_layer_0/attention/query/kernel")]
    ffn_out = [p for p in split if p.endswith(
        "transformer_layer_0/output_dense/kernel")]
    assert query and ffn_out, sorted(split)
    assert split[query[0]] == [[32, 32], [32, 16], 2]
    assert split[ffn_out[0]] == [[64, 32], [32, 32], 2]
    print(f"{len(split)} variables split over 2 devices")


def compare(run, one, label, seconds):
    """`run`'s per-step losses and final weights equal the 1-process
    run's within TOLERANCE, after training moved the weights."""
    got, want = losses(run), losses(one)
    assert sorted(got) == sorted(want) == list(range(1, STEPS + 1))
    # Relative (float32 losses near 5: 1e-6 is a few ulp).
    loss_diff = max(abs(got[s] - want[s]) for s in want) / max(
        abs(want[s]) for s in want)
    weights, reference = final_weights(run), final_weights(one)
    assert len(weights) == len(reference)
    weight_diff = max(float(np.max(np.abs(a - b))) if a.size else 0.0
                      for a, b in zip(weights, reference))
    # How far training moved the float variables (not the step counters)
    # between the two checkpoints.
    moved = max(float(np.max(np.abs(a - b))) if a.size else 0.0
                for a, b, f in zip(weights, final_weights_at_start(one),
                                   float_kinds(one)) if f)
    print(f"{label}: max |loss diff| {loss_diff:.3g}, max |weight diff| "
          f"{weight_diff:.3g} (moved {moved:.3g}); {seconds:.0f} s")
    assert moved > 10 * TOLERANCE
    assert loss_diff <= TOLERANCE and weight_diff <= TOLERANCE


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
