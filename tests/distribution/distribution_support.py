"""Running the distribution workers: each in its own process (the backend,
the device count and the process group are fixed at start-up), bounded in
time, killed (with its children) when it overruns."""

import os
import subprocess
from pathlib import Path

import numpy as np

import warm_python
from kzoo.distribution.launch import xla_flags_with_cpu_devices

WORKERS = Path(__file__).resolve().parent / "workers"
REPO = Path(__file__).resolve().parents[2]
LAUNCH = REPO / "scripts" / "launch.py"


def worker_env(backend, cpu_devices=None, **extra):
    """The environment of a worker on `backend`, with `cpu_devices` virtual
    CPU devices on jax (one by default)."""
    # Workers import `common` from their folder and kzoo from the checkout.
    env = warm_python.environment(backend, path=[WORKERS, REPO], **extra)
    # The suite's XLA compile options (tests/conftest.py) carry over; the
    # virtual-device count is the worker's own (`cpu_devices`, or none).
    # Without those options XLA compiled the 8-device mesh worker's steps
    # at full optimisation.
    env["XLA_FLAGS"] = xla_flags_with_cpu_devices(
        os.environ.get("XLA_FLAGS", ""), cpu_devices)
    return env


def start(argv, env):
    """`python ARGV` in the workers' folder, in a warm interpreter
    (tests/warm_python.py) in its own process group; stderr into stdout."""
    return warm_python.start(argv, env, cwd=WORKERS, merge_stderr=True)


def finish(process, timeout):
    """Wait for `process`; on timeout kill its whole process group. Returns
    its output; raises with the output's tail when it failed."""
    try:
        output, _ = process.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        process.kill()  # and what it started
        output, _ = process.communicate()
        raise AssertionError(
            f"worker timed out after {timeout}s:\n{output[-4000:]}")
    if process.returncode != 0:
        raise AssertionError(
            f"worker exited with {process.returncode}:\n{output[-4000:]}")
    return output


def run(argv, env, timeout):
    return finish(start(argv, env), timeout)


def load_weights(path):
    """Weights, logged loss and process count saved by train_step.py."""
    data = np.load(path)
    weights = [data[f"w{i}"] for i in range(
        sum(1 for k in data.files if k.startswith("w")))]
    return weights, float(data["loss"]), int(data["processes"])


def two_processes_vs_one(backend, tmp_path, timeout=240):
    """Run train_step.py as one process and, at the same time, as two
    processes through scripts/launch.py; return both results."""
    one, two = tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    env = worker_env(backend)
    single = start(["train_step.py", one], env)
    launched = start([LAUNCH, "--backend", backend, "--processes", "2",
                      "--timeout", str(timeout - 20), "train_step.py", two],
                     env)
    finish(launched, timeout)
    finish(single, timeout)
    return (load_weights(one / "process_0.npz"),
            [load_weights(two / f"process_{i}.npz") for i in range(2)])


def max_diff(a, b):
    return max(float(np.max(np.abs(x - y))) for x, y in zip(a, b))


def check_layerwise(report, tolerance):
    """A worker's `layerwise_report`: `LayerwiseAdamW` + `GradualUnfreezing`
    moved the same layer groups each epoch as on one device (only the
    head, then one more), by the same amounts."""
    top = report["groups"] - 1
    assert report["single_moved_groups"] == [[top], [top - 1, top]]
    assert report["moved_groups"] == report["single_moved_groups"]
    assert report["weights_diff"] < tolerance
