#!/usr/bin/env bash
# The full test suite, once per Keras backend. Exits non-zero if any
# backend fails; prints the slowest tests of each pass and one summary line
# per backend at the end.
#
# Tests marked `once` (backend-independent, or cross-backend checks that
# start the other backends themselves) and tests marked `convergence`
# (multi-epoch fits on real text: the same code on every backend, and
# tests/models/test_training_cross_backend.py checks that every backend
# takes the same training step) run in one backend's pass only:
# KZOO_ONCE_BACKEND (default torch, where they are fastest: a TensorFlow
# pass with them took ~2x as long), or the first backend listed when it
# is not among them; so do the model families' own tests but BERT's
# (tests/conftest.py says why). One backend alone
# (KZOO_TEST_BACKENDS=jax) runs every kind. Each pass spreads the test
# files over one pytest-xdist worker per CPU core
# (KZOO_TEST_WORKERS overrides; 0 runs in this process). Extra
# arguments go to pytest (e.g. `bash scripts/run_tests.sh -x -k bert`);
# KZOO_TEST_BACKENDS picks the backends (default: all three).
# Files go out longest first (tests/durations.json, see
# scripts/record_test_durations.py); KZOO_TEST_JUNIT_DIR=DIR writes each
# pass's JUnit XML to DIR/<backend>.xml, from which that table is remade.
set -u
cd "$(dirname "$0")/.."
# Compiled bytecode for every interpreter a pass starts: its workers, the
# warm servers (tests/warm_python.py) and the fresh processes the guides,
# scripts, launchers and CLI tests start (some 40 in the torch pass).
# With PYTHONDONTWRITEBYTECODE set (some sandboxes set it) none is ever
# cached, and each of them compiled TensorFlow, torch, jax and
# transformers from source again: ~7 s of CPU apiece (.ci/run: the first
# import of kzoo takes ~15 s, a compiled one ~8 s). The caches go to a
# folder outside the checkout and the venv instead (PYTHONPYCACHEPREFIX;
# set it yourself to choose the folder).
if [ -n "${PYTHONDONTWRITEBYTECODE:-}" ]; then
    unset PYTHONDONTWRITEBYTECODE
    export PYTHONPYCACHEPREFIX=${PYTHONPYCACHEPREFIX:-${TMPDIR:-/tmp}/kzoo-test-pycache}
fi
status=0
summary=""
backends=(${KZOO_TEST_BACKENDS:-torch jax tensorflow})
once=${KZOO_ONCE_BACKEND:-torch}
[[ " ${backends[*]} " == *" $once "* ]] || once=${backends[0]}
for backend in "${backends[@]}"; do
    echo "=== KERAS_BACKEND=$backend ==="
    marks="not large"
    [ "$backend" = "$once" ] || marks="$marks and not once and not convergence"
    start=$(date +%s)
    KERAS_BACKEND=$backend python -m pytest -q -p no:cacheprovider \
        -n "${KZOO_TEST_WORKERS:-auto}" --dist loadfile --no-loadscope-reorder \
        ${KZOO_TEST_JUNIT_DIR:+--junitxml="$KZOO_TEST_JUNIT_DIR/$backend.xml"} \
        -m "$marks" --durations=15 "$@" tests
    code=$?
    took=$(( $(date +%s) - start ))
    summary="$summary\n  $backend: exit $code in ${took}s"
    [ $code -eq 0 ] || status=1
done
printf "=== per-backend results:%b\n" "$summary"
exit $status
