"""Parity figures for a release note: runs every family's parity tests
(kzoo vs `transformers` on random checkpoints with odd configs) on each
Keras backend and prints, per family and backend, the largest max-abs
difference over every output the tests compare.

    python scripts/parity_report.py                 # all families, 3 backends
    python scripts/parity_report.py albert electra  # some families
    python scripts/parity_report.py --backends jax,torch

Needs the test extras (`torch`, `transformers`). The figures are the
tests' own (`tests/convert/convert_helpers.max_abs_differences` logs
them under KZOO_PARITY_LOG), so they are what CI asserts is within 1e-5.
"""

import argparse
import collections
import os
import re
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BACKENDS = ("jax", "tensorflow", "torch")


def parity_tests(families):
    # Each family's in its test folder; the ones across families (the
    # generic heads, question answering) with the conversion tests.
    tests = sorted([*(ROOT / "tests" / "models").glob("*/test_*_parity.py"),
                    *(ROOT / "tests" / "convert").glob("test_*_parity.py")],
                   key=lambda path: path.name)
    if families:
        tests = [t for t in tests if family_of(t.name) in families]
    return tests


def family_of(test_name):
    return re.match(r"test_(.+)_parity\.py", Path(test_name).name).group(1)


def main(families, backends=BACKENDS):
    tests = parity_tests(families)
    if not tests:
        sys.exit(f"no parity tests for {families}; families: "
                 f"{[family_of(t.name) for t in parity_tests(())]}")
    worst = collections.defaultdict(float)
    with tempfile.TemporaryDirectory() as scratch:
        log = Path(scratch) / "parity.tsv"
        for backend in backends:
            print(f"running the parity tests on {backend} ...", flush=True)
            env = {**os.environ, "KERAS_BACKEND": backend,
                   "KZOO_PARITY_LOG": str(log)}
            done = subprocess.run(
                [sys.executable, "-m", "pytest", "-q", "-p",
                 "no:cacheprovider", "-n", "auto", "--dist", "loadfile",
                 *map(str, tests)],
                cwd=ROOT, env=env, capture_output=True, text=True)
            print(done.stdout.strip().splitlines()[-1] if done.stdout
                  else done.stderr[-2000:])
        for line in log.read_text(encoding="utf-8").splitlines():
            test, backend, _, difference = line.split("\t")
            key = (family_of(test.split("::")[0]), backend)
            worst[key] = max(worst[key], float(difference))
    names = sorted({family for family, _ in worst})
    print(f"\n{'family':<14}" + "".join(f"{b:>12}" for b in backends))
    for family in names:
        print(f"{family:<14}" + "".join(
            f"{worst.get((family, b), float('nan')):>12.2g}"
            for b in backends))


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("families", nargs="*",
                        help="families to check (default: every one)")
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated Keras backends")
    arguments = parser.parse_args()
    main(tuple(arguments.families), tuple(arguments.backends.split(",")))
