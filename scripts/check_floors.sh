#!/usr/bin/env bash
# The dependency floors check: install kzoo with every runtime dependency
# pinned to the floor pyproject.toml declares (scripts/min_constraints.py)
# into a second venv, then run a smoke subset of the tests on TensorFlow.
# A floor that is too low fails here. Run by .ci/run; about 2 minutes on
# 2 cores (about 30 s of it the install).
#   bash scripts/check_floors.sh            # venv in .venv-min/
#   KZOO_FLOORS_VENV=/tmp/v bash scripts/check_floors.sh
set -euo pipefail
cd "$(dirname "$0")/.."
venv=${KZOO_FLOORS_VENV:-.venv-min}
# Compiled on first import rather than at install (see .ci/run).
unset PYTHONDONTWRITEBYTECODE
start=$(date +%s)
rm -rf "$venv"
python3 -m venv "$venv"
. "$venv/bin/activate"
python -m pip install -q --upgrade pip
constraints="$venv/floors.txt"
python scripts/min_constraints.py -o "$constraints"
cat "$constraints"
# kzoo and its floors; the test tools are not runtime dependencies and
# come unpinned.
python -m pip install -q --no-compile -c "$constraints" -e . pytest pytest-xdist hypothesis
python -m pip check
installed=$(date +%s)
echo "=== floors installed in $(( installed - start ))s"

export KERAS_BACKEND=tensorflow
export TF_CPP_MIN_LOG_LEVEL=${TF_CPP_MIN_LOG_LEVEL:-2}
# An import of everything, and the installed versions are the floors.
python - "$constraints" <<'EOF'
import importlib.metadata as metadata
import sys

import kzoo  # noqa: F401  (imports keras-hub, tensorflow-text, tokenizers)

wrong = []
for line in open(sys.argv[1]):
    if line.strip() and not line.startswith("#"):
        name, version = line.strip().split("==")
        if metadata.version(name) != version:
            wrong.append(f"{name} {metadata.version(name)} (floor {version})")
if wrong:
    sys.exit("not at the floor: " + ", ".join(wrong))
print("kzoo imports with every dependency at its floor")
EOF
# The smoke subset: the tokenizers and preprocessors (where keras-hub,
# tensorflow-text and `tokenizers` are used, eagerly and in tf.data; the
# NUL tests tell keras-hub 0.28 from 0.29), and two tiny fits of a task
# through its preset save/load (keras, h5py).
# Spread test by test over the cores (the contract file is most of it).
# Not the contract's tests that trace every preprocessor class again in
# tf.data (over half the time); test_first_use_inside_tf_data_on_this_
# backend traces one of each tokenizer class, which is where the floors'
# code differs.
python -m pytest -q -p no:cacheprovider -n "${KZOO_TEST_WORKERS:-auto}" \
    --dist load -k "not (test_tf_data_gives_tf_values_equal_to_eager \
        or test_prepared_once_the_same_eagerly_and_traced \
        or test_first_use_inside_tf_data_unbatched)" \
    tests/models/bert/test_bert_tokenizer.py \
    tests/models/bert/test_bert_preprocessor.py \
    tests/models/gpt2/test_gpt2_tokenizer.py \
    tests/models/gpt2/test_gpt2_nul.py \
    tests/models/test_tokenizer_contract.py \
    tests/models/test_preprocessor_contract.py \
    "tests/models/bert/test_bert_tasks.py::test_text_classifier" \
    "tests/models/gpt2/test_gpt2_tasks.py::test_classifier_reads_the_last_real_token"
echo "=== floors check passed in $(( $(date +%s) - start ))s" \
     "(install $(( installed - start ))s)"
