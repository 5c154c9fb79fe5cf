"""scripts/benchmark_pretraining.py's `overhead` section times real runs:
each of its alternating runs trains (in a folder of its own: in a shared
one, the later runs resumed the first's finished run, trained nothing and
re-read its metrics, so both speeds came out identical)."""

import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import pytest

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / \
    "benchmark_pretraining.py"

# The script starts the runs itself, on the backends it is given.
pytestmark = pytest.mark.once


def test_overhead_times_a_real_run_and_an_in_memory_one():
    backend = keras.backend.backend()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "overhead", "--backends", backend,
         "--overhead-preset", "bert_tiny_en_uncased", "--overhead-steps",
         "2", "--overhead-pairs", "1", "--batch-size", "4", "--sequence-length", "32",
         "--pipeline-megabytes", "0.2"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stdout + done.stderr
    line = re.search(r"real pipeline\s+([\d,]+) tokens/s\s+in-memory\s+"
                     r"([\d,.]+) tokens/s\s+overhead", done.stdout)
    assert line, done.stdout + done.stderr[-2000:]
    real, in_memory = (float(v.replace(",", "")) for v in line.groups())
    assert real > 0 and in_memory > 0
    # Separate timed runs: equal speeds meant one run read twice.
    assert real != in_memory, done.stdout
