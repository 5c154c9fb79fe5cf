"""`kzoo pretrain` resumes exactly: a run killed with SIGKILL (after its
first checkpoint, or while writing one) and run again trains what the
uninterrupted run trains, per-step losses and final weights equal; a full
disk keeps the previous checkpoint. On the suite's current backend (each
backend's pass runs it)."""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import keras
import numpy as np
import pytest

import pretraining_testing
from kzoo.pretraining import checkpoints
from kzoo.pretraining.config import PretrainingError
from kzoo.pretraining.run import pretrain

pretraining_testing.register_tiny_mlm()

OPTIONS = dict(objective="tiny_mlm", from_scratch=True, max_steps=12,
               batch_size=4, sequence_length=32, checkpoint_every=4,
               learning_rate=1e-3, warmup_steps=2, seed=5, verbose=0)
FLAGS = ["--objective", "tiny_mlm", "--from-scratch", "--max-steps", "12",
         "--batch-size", "4", "--sequence-length", "32",
         "--checkpoint-every", "4", "--learning-rate", "1e-3",
         "--warmup-steps", "2", "--seed", "5", "--quiet"]
SCRIPT = Path(pretraining_testing.__file__)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretraining")
    preset = pretraining_testing.make_preset(root / "preset")
    corpus = pretraining_testing.make_corpus(root / "corpus", preset)
    return root, str(preset), str(corpus)


@pytest.fixture(scope="module")
def uninterrupted(tiny):
    root, preset, corpus = tiny
    summary = pretrain(preset, corpus, root / "whole", **OPTIONS)
    assert summary["steps_this_run"] == 12
    return root / "whole"


def losses(output):
    lines = (Path(output) / "metrics.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in lines]
    return {r["step"]: r["loss"] for r in records if "loss" in r}


def final_weights(output):
    step, folder = checkpoints.list_checkpoints(output)[-1]
    assert step == 12
    with np.load(folder / "variables.npz") as data:
        return [data[key] for key in sorted(data)]


def assert_same_run(output, reference):
    got, want = losses(output), losses(reference)
    assert sorted(got) == list(range(1, 13)) == sorted(want)
    loss_diff = max(abs(got[s] - want[s]) for s in want)
    weights = final_weights(output)
    reference_weights = final_weights(reference)
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
    command = [sys.executable, str(SCRIPT), "pretrain", preset, corpus,
               str(output), *FLAGS]
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(
        [str(SCRIPT.parent), os.environ.get("PYTHONPATH", "")]))
    process = subprocess.Popen(command, env=env, stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT)
    first = output / checkpoints.CHECKPOINTS / "step-000000004"
    deadline = time.time() + 300
    while not first.exists() and process.poll() is None and \
            time.time() < deadline:
        time.sleep(0.05)
    process.send_signal(signal.SIGKILL)
    out = process.communicate()[0].decode()
    assert process.returncode == -signal.SIGKILL, out
    done = [s for s, _ in checkpoints.list_checkpoints(output)]
    assert 4 in done and 12 not in done, (done, out)
    again = subprocess.run(command, env=env, capture_output=True,
                           text=True, timeout=300)
    assert again.returncode == 0, again.stdout + again.stderr
    assert "resumed from step" in again.stdout
    assert_same_run(output, uninterrupted)
    assert (output / "preset" / "config.json").is_file()


class Killed(BaseException):
    """What a SIGKILL during the write would leave: nothing cleaned up."""


def test_full_disk_and_a_kill_while_writing_leave_the_last_checkpoint(
        tiny, uninterrupted, monkeypatch):
    root, preset, corpus = tiny
    output = root / "crashes"
    write_arrays = checkpoints.write_arrays

    def full_disk(path, arrays):
        if ".step-000000008" in str(path):
            with open(path, "wb") as f:
                f.write(b"half")
            raise OSError(28, "No space left on device")
        write_arrays(path, arrays)

    monkeypatch.setattr(checkpoints, "write_arrays", full_disk)
    with pytest.raises(PretrainingError, match="disk is full.*Free space"):
        pretrain(preset, corpus, output, **OPTIONS)
    names = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert names == ["step-000000004"]  # no half-written folder left

    def killed(path, arrays):
        if ".step-000000008" in str(path):
            with open(path, "wb") as f:
                f.write(b"half")
            # A killed process cleans nothing up.
            monkeypatch.setattr(checkpoints.shutil, "rmtree",
                                lambda *a, **k: None)
            raise Killed()
        write_arrays(path, arrays)

    monkeypatch.setattr(checkpoints, "write_arrays", killed)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **OPTIONS)
    monkeypatch.undo()
    names = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert names[0].startswith(".step-000000008.partial")
    assert [s for s, _ in checkpoints.list_checkpoints(output)] == [4]
    summary = pretrain(preset, corpus, output, **OPTIONS)
    assert summary["resumed_from"] == 4
    assert not [p for p in (output / "checkpoints").iterdir()
                if p.name.startswith(".")]
    assert_same_run(output, uninterrupted)
