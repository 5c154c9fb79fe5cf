#!/usr/bin/env bash
# The full test suite, once per Keras backend. Exits non-zero if any
# backend fails; prints the slowest tests of each pass and one summary line
# per backend at the end.
#
# Tests marked `once` (backend-independent, or cross-backend checks that
# start the other backends themselves) run in the first backend's pass
# only; tests marked `convergence` (multi-epoch fits on real text: the
# same code on every backend, and tests/models/test_training_cross_backend.py
# checks that every backend takes the same training step) in the last
# pass only (torch by default, where tiny fits are fastest). One backend
# alone (KZOO_TEST_BACKENDS=jax) runs both kinds. Each pass spreads the
# test files over one pytest-xdist worker per CPU core
# (KZOO_TEST_WORKERS overrides; 0 runs in this process). Extra
# arguments go to pytest (e.g. `bash scripts/run_tests.sh -x -k bert`);
# KZOO_TEST_BACKENDS picks the backends (default: all three).
set -u
cd "$(dirname "$0")/.."
status=0
summary=""
backends=(${KZOO_TEST_BACKENDS:-tensorflow jax torch})
first=${backends[0]}
last=${backends[-1]}
for backend in "${backends[@]}"; do
    echo "=== KERAS_BACKEND=$backend ==="
    marks="not large"
    [ "$backend" = "$first" ] || marks="$marks and not once"
    [ "$backend" = "$last" ] || marks="$marks and not convergence"
    start=$(date +%s)
    KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider \
        -n "${KZOO_TEST_WORKERS:-auto}" --dist loadfile \
        -m "$marks" --durations=15 "$@" tests
    code=$?
    took=$(( $(date +%s) - start ))
    summary="$summary\n  $backend: exit $code in ${took}s"
    [ $code -eq 0 ] || status=1
done
printf "=== per-backend results:%b\n" "$summary"
exit $status
