#!/usr/bin/env bash
# The full test suite, once per Keras backend. Exits non-zero if any
# backend fails; prints one summary line per backend at the end.
# Extra arguments go to pytest (e.g. `bash scripts/run_tests.sh -x -k bert`).
set -u
cd "$(dirname "$0")/.."
status=0
summary=""
for backend in ${KZOO_TEST_BACKENDS:-tensorflow jax torch}; do
    echo "=== KERAS_BACKEND=$backend ==="
    start=$(date +%s)
    KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider "$@" tests
    code=$?
    took=$(( $(date +%s) - start ))
    summary="$summary\n  $backend: exit $code in ${took}s"
    [ $code -eq 0 ] || status=1
done
printf "=== per-backend results:%b\n" "$summary"
exit $status
