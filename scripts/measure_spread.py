"""Measure the spread of the tests' statistical assertions over seeds.

A test that asserts "the loss fell below 0.8x its start" or "accuracy
>= 0.9" must sit at least 3 standard deviations from what it measures
(CONTRIBUTING.md). This runs the named tests once per seed
(`KZOO_TEST_SEED`), records every `fit`'s epoch metrics
(`KZOO_RECORD_HISTORY`, see tests/conftest.py) and prints, per test and
metric, the first and last epoch's value and their ratio: mean, standard
deviation and range over the seeds.

    python scripts/measure_spread.py --seeds 1 2 3 4 5 -- \\
        -m convergence tests/models/bert/test_bert_training.py

The backend is `KERAS_BACKEND`'s (convergence tests run on torch in the
suite).
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def run(seeds, pytest_args):
    """{test id: [(seed, history), ...]} over every fit the tests ran
    (a test that fits several times keeps each fit, in order)."""
    records = defaultdict(list)
    with tempfile.TemporaryDirectory() as tmp:
        for seed in seeds:
            log = Path(tmp) / f"seed{seed}.jsonl"
            env = {**os.environ, "KZOO_TEST_SEED": str(seed),
                   "KZOO_RECORD_HISTORY": str(log)}
            result = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p",
                 "no:cacheprovider", *pytest_args], cwd=ROOT, env=env,
                capture_output=True, text=True)
            tail = result.stdout.strip().splitlines()[-1:] or ["(no output)"]
            print(f"seed {seed}: {tail[0]}", flush=True)
            if log.exists():
                for line in log.read_text().splitlines():
                    entry = json.loads(line)
                    records[entry["test"]].append((seed, entry["history"]))
    return records


def summarise(values):
    mean = statistics.fmean(values)
    spread = statistics.stdev(values) if len(values) > 1 else 0.0
    return f"{mean:.4g} +- {spread:.2g} [{min(values):.4g}, {max(values):.4g}]"


def report(records):
    for test, fits in sorted(records.items()):
        print(f"\n{test}")
        by_fit = defaultdict(list)  # (fit index, metric) -> per-seed values
        counters = defaultdict(int)
        for seed, history in fits:
            index = counters[seed]
            counters[seed] += 1
            for metric, values in history.items():
                if values:
                    by_fit[(index, metric)].append(values)
        for (index, metric), runs in sorted(by_fit.items()):
            first = [float(r[0]) for r in runs]
            last = [float(r[-1]) for r in runs]
            ratio = [b / a for a, b in zip(first, last) if a]
            print(f"  fit {index} {metric} (n={len(runs)}): "
                  f"first {summarise(first)}; last {summarise(last)}"
                  + (f"; last/first {summarise(ratio)}" if ratio else ""))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--seeds", type=int, nargs="+",
                        default=[1, 2, 3, 4, 5])
    parser.add_argument("pytest_args", nargs="+",
                        help="tests and options for pytest (after --)")
    args = parser.parse_args(argv)
    report(run(args.seeds, args.pytest_args))


if __name__ == "__main__":
    main()
