"""`kzoo pretrain` resumes exactly: on the suite's current backend (each
backend's pass runs it), a `kzoo pretrain` process killed with SIGKILL
after a checkpoint and the same command run again train what the
uninterrupted run trains (per-step losses and final weights equal,
<= 1e-6); once, the same with gradient accumulation (its step count and
learning rate schedule over optimizer steps), and a mixed_bfloat16 run
restores its variables with their dtypes. The real "mlm" objective on a corpus that
`kzoo.corpus.prepare_corpus` made from a few paragraphs.

A full disk or a kill while a checkpoint is written
(`test_run_inputs.py`), bad inputs, evaluation and the config file are
backend-independent and run once."""

import json
import signal
import time
from pathlib import Path

import keras
import numpy as np
import pytest

import pretraining_testing
import warm_python
from kzoo.cli import main as kzoo_main
from kzoo.pretraining import checkpoints
from kzoo.pretraining.run import Run, pretrain

STEPS = 6
OPTIONS = dict(objective="mlm", from_scratch=True, max_steps=STEPS,
               batch_size=4, sequence_length=32, checkpoint_every=2,
               learning_rate=1e-3, warmup_steps=2, seed=5, verbose=0)
FLAGS = ["--objective", "mlm", "--from-scratch", "--max-steps", str(STEPS),
         "--batch-size", "4", "--sequence-length", "32",
         "--checkpoint-every", "2", "--learning-rate", "1e-3",
         "--warmup-steps", "2", "--seed", "5", "--quiet"]
SCRIPT = Path(pretraining_testing.__file__)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretraining")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus", preset)
    return root, str(preset), str(corpus)


@pytest.fixture(scope="module")
def uninterrupted(tiny):
    root, preset, corpus = tiny
    summary = pretrain(preset, corpus, root / "whole", **OPTIONS)
    assert summary["steps_this_run"] == STEPS
    return root / "whole"


def records(output):
    lines = (Path(output) / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def losses(output):
    return {r["step"]: r["loss"] for r in records(output) if "loss" in r}


def final_weights(output, steps=STEPS):
    step, folder = checkpoints.list_checkpoints(output)[-1]
    assert step == steps
    with np.load(folder / "variables.npz") as data:
        return [data[key] for key in sorted(data)]


def assert_same_run(output, reference, steps=STEPS):
    got, want = losses(output), losses(reference)
    assert sorted(got) == list(range(1, steps + 1)) == sorted(want)
    loss_diff = max(abs(got[s] - want[s]) for s in want)
    weights = final_weights(output, steps)
    reference_weights = final_weights(reference, steps)
    assert len(weights) == len(reference_weights)
    weight_diff = max(float(np.max(np.abs(
        a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        for a, b in zip(weights, reference_weights))
    print(f"{keras.backend.backend()}: max |loss diff| {loss_diff:.3g}, "
          f"max |weight diff| {weight_diff:.3g}")
    assert loss_diff <= 1e-6 and weight_diff <= 1e-6


def test_kill_9_then_the_same_command_resumes_exactly(tiny, uninterrupted):
    root, preset, corpus = tiny
    output = root / "killed"
    arguments = ["pretrain", preset, corpus, str(output), *FLAGS]
    # The process stops still once checkpoint 2 is written (see
    # pretraining_testing), so that the kill lands between two
    # checkpoints however busy the machine is; a kill while a checkpoint
    # is written is test_run_inputs.py's.
    env = warm_python.environment(
        path=[SCRIPT.parent], KZOO_TEST_PAUSE_AFTER_CHECKPOINT="2",
        OMP_NUM_THREADS="1")
    process = warm_python.start([SCRIPT, *arguments], env,
                                merge_stderr=True)
    first = output / checkpoints.CHECKPOINTS / "step-000000002"
    deadline = time.time() + 300
    while not first.exists() and process.poll() is None and \
            time.time() < deadline:
        time.sleep(0.05)
    process.kill()
    out = process.communicate()[0]
    assert process.returncode == -signal.SIGKILL, out
    assert [s for s, _ in checkpoints.list_checkpoints(output)] == [2], out
    # The same command again (in this process: a second interpreter
    # start-up would double the test's time; the checkpoint holds every
    # state a fresh process lacks).
    assert kzoo_main(arguments) == 0
    assert_same_run(output, uninterrupted)
    assert (output / "preset" / "config.json").is_file()


class Killed(BaseException):
    """Stands for a kill right after a checkpoint: nothing cleaned up."""


def kill_after_checkpoint(monkeypatch, step):
    write = checkpoints.write_checkpoint

    def write_then_die(output, at, arrays, state):
        final = write(output, at, arrays, state)
        if at == step:
            raise Killed()
        return final

    monkeypatch.setattr(checkpoints, "write_checkpoint", write_then_die)


# Accumulation and mixed precision are Keras' own on every backend, and
# what a checkpoint saves of them is variables like any other: once (the
# torch pass, where kzoo's fused AdamW update has its own path).
@pytest.mark.once
def test_gradient_accumulation_steps_schedule_and_exact_resume(
        tiny, monkeypatch):
    root, preset, corpus = tiny
    options = dict(OPTIONS, max_steps=4, batch_size=2,
                   gradient_accumulation_steps=2)
    whole = root / "accumulated"
    summary = pretrain(preset, corpus, whole, **options)
    assert summary["steps_this_run"] == 4
    steps = [r for r in records(whole) if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2, 3, 4]
    # Warmup over optimizer steps (not batches): 0, peak/2, then linear
    # decay to 0 at step 4.
    np.testing.assert_allclose([r["learning_rate"] for r in steps],
                               [0.0, 5e-4, 1e-3, 5e-4], atol=1e-12)
    state = checkpoints.read_state(checkpoints.list_checkpoints(whole)[-1][1])
    # Keras counts batches; 2 per optimizer step.
    iterations = state["variables"].index(next(
        p for p in state["variables"] if p.endswith("iteration")
        or p.endswith("iterations")))
    with np.load(checkpoints.list_checkpoints(whole)[-1][1]
                 / "variables.npz") as data:
        assert int(data[f"v{iterations:05d}"]) == 8

    output = root / "accumulated_killed"
    kill_after_checkpoint(monkeypatch, 2)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **options)
    monkeypatch.undo()
    assert pretrain(preset, corpus, output, **options)["resumed_from"] == 2
    assert_same_run(output, whole, steps=4)


@pytest.mark.once
def test_mixed_bfloat16_runs_and_restores_its_variables(tiny, monkeypatch):
    root, preset, corpus = tiny
    options = dict(OPTIONS, max_steps=2, checkpoint_every=1, warmup_steps=1,
                   dtype="mixed_bfloat16")
    output = root / "bf16"
    kill_after_checkpoint(monkeypatch, 1)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **options)
    monkeypatch.undo()
    restore = Run._restore
    restored = {}

    def spy(self, folder):
        state = restore(self, folder)
        restored["dtypes"] = [keras.backend.standardize_dtype(v.dtype)
                              for v in self.variables]
        restored["state"] = state["dtypes"]
        restored["policy"] = self.task.backbone.dtype_policy.name
        return state

    monkeypatch.setattr(Run, "_restore", spy)
    summary = pretrain(preset, corpus, output, **options)
    assert summary["resumed_from"] == 1 and summary["steps_this_run"] == 1
    assert np.isfinite(summary["loss"])
    assert restored["policy"] == "mixed_bfloat16"
    # Mixed precision keeps float32 variables (computing in bfloat16);
    # each comes back with the dtype it was saved with.
    assert restored["dtypes"] == restored["state"]
    assert "float32" in restored["dtypes"]
    config = json.loads((output / "preset" / "config.json").read_text())
    assert "mixed_bfloat16" in json.dumps(config)
