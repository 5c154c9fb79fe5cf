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

import warm_python

SCRIPT = Path(__file__).resolve().parents[2] / "scripts" / \
    "benchmark_pretraining.py"

# The script starts the runs itself, on the backends it is given.
pytestmark = pytest.mark.once


def test_overhead_times_a_real_run_and_an_in_memory_one():
    backend = keras.backend.backend()
    # The script in a warm interpreter (tests/warm_python.py): its own
    # start-up imports nothing again (the runs it times start fresh ones,
    # as they must), and a timeout kills those runs too (its own process
    # group), where subprocess.run's left them running.
    done = warm_python.run(
        [SCRIPT, "overhead", "--backends", backend,
         "--overhead-preset", "bert_tiny_en_uncased", "--overhead-steps",
         "2", "--overhead-pairs", "1", "--batch-size", "4",
         "--sequence-length", "32", "--pipeline-megabytes", "0.2"],
        warm_python.environment(), timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    line = re.search(r"real pipeline\s+([\d,]+) tokens/s\s+in-memory\s+"
                     r"([\d,.]+) tokens/s\s+overhead", done.stdout)
    assert line, done.stdout + done.stderr[-2000:]
    real, in_memory = (float(v.replace(",", "")) for v in line.groups())
    assert real > 0 and in_memory > 0
    # Separate timed runs: equal speeds meant one run read twice.
    assert real != in_memory, done.stdout


def test_speed_compares_kzoo_with_transformers_against_the_ceiling():
    """The `speed` section (issue 50 item 5) in its smoke mode: kzoo on
    this backend and transformers' BertForMaskedLM on torch, both
    precisions, the matmul ceiling timed in the same run, the ratios."""
    backend = keras.backend.backend()
    done = subprocess.run(
        [sys.executable, str(SCRIPT), "speed", "--speed-smoke",
         "--backends", backend],
        capture_output=True, text=True, timeout=900,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "failed" not in out, out
    for dtype in ("float32", "bfloat16"):
        ceiling = re.search(rf"ceiling {dtype}\s+([\d,.]+) GFLOP/s", out)
        assert ceiling and float(ceiling.group(1).replace(",", "")) > 0, out
    rows = {}
    for library, row_backend, precision, speed, achieved, share in \
            re.findall(r"^\s+(kzoo|transformers)\s+(\w+)\s+(\w+)\s+"
                       r"([\d,]+)\s+([\d,.]+)\s+([\d.]+)%$", out, re.M):
        rows[(library, row_backend, precision)] = (
            float(speed.replace(",", "")), float(achieved.replace(",", "")),
            float(share))
    assert set(rows) == {(library, b, precision)
                         for library, b in (("kzoo", backend),
                                            ("transformers", "torch"))
                         for precision in ("float32", "mixed_bfloat16")}, out
    for speed, achieved, share in rows.values():
        assert speed > 0 and achieved > 0 and share > 0
    for precision in ("float32", "mixed_bfloat16"):
        kzoo, reference = (rows[("kzoo", backend, precision)][0],
                           rows[("transformers", "torch", precision)][0])
        ratio = re.search(rf"ratio kzoo {backend} / transformers torch "
                          rf"{precision}: ([\d.]+)x", out)
        assert ratio and float(ratio.group(1)) == pytest.approx(
            kzoo / reference, rel=0.01, abs=0.01), out
