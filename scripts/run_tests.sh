#!/usr/bin/env bash
# The full test suite, once per Keras backend. Exits non-zero if any
# backend fails; prints the slowest tests of each pass and one summary line
# per backend at the end.
#
# Tests marked `once` (backend-independent, or cross-backend checks that
# start the other backends themselves) run in the first backend's pass
# only. Each pass spreads the test files over one pytest-xdist worker per
# CPU core (KZOO_TEST_WORKERS overrides; 0 runs in this process). Extra
# arguments go to pytest (e.g. `bash scripts/run_tests.sh -x -k bert`);
# KZOO_TEST_BACKENDS picks the backends (default: all three).
set -u
cd "$(dirname "$0")/.."
status=0
summary=""
first=1
for backend in ${KZOO_TEST_BACKENDS:-tensorflow jax torch}; do
    echo "=== KERAS_BACKEND=$backend ==="
    if [ $first -eq 1 ]; then
        marks="not large"
    else
        marks="not large and not once"
    fi
    first=0
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
