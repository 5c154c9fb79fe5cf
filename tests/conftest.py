"""Shared fixtures. The backend is whatever KERAS_BACKEND names; run the
suite once per backend (see README)."""

import gc
import json
import os
import sys
from pathlib import Path

import pytest

# Quiet TensorFlow's C++ start-up chatter before anything imports it.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
# One thread per op for torch and TensorFlow, here and in every process a
# test starts (guides, the CLI, cross-backend workers, DDP): the tests'
# models are tiny, so threads cannot help them, and the suite already
# keeps every core busy (one pytest-xdist worker per core). With more
# threads than cores they wait on each other: the ELMo guide's smoke run
# took 222 s with 2 threads against 26 s with 1 while the suite ran on 2
# cores, and the encoder-decoder generation tests ~100 s against ~17 s.
# Set either variable yourself to choose.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("TF_NUM_INTRAOP_THREADS", "1")
# The tests compile many small graphs once each, and on jax every eager
# op is one more compile: XLA's LLVM optimisation passes buy nothing there
# and cost over half of every compile (jax, and TensorFlow's jit-compiled
# fit), and its newer fusion emitters compile slower than the classic
# ones (jax, four test files: 64 s against 95 s; the same results within
# the suite's tolerances). Set XLA_FLAGS yourself to override.
os.environ.setdefault("XLA_FLAGS", "--xla_backend_optimization_level=0 "
                      "--xla_cpu_use_fusion_emitters=false")
# Make `import helpers` work from every test folder, and the helper
# modules that sit with the tests they serve: the conversion tests'
# (tests/convert: convert_helpers, parity_harness) and each family's
# (tests/models/<family>/<family>_testing.py, beside its tests: a family's
# tests are one folder). Appended, so that no module name of a test folder
# hides an installed one; pytest's rootdir import mode needs every test
# and helper basename unique anyway.
_TESTS = Path(__file__).resolve().parent
sys.path.insert(0, str(_TESTS))
sys.path += [str(_TESTS / "convert"), *sorted(
    str(folder) for folder in (_TESTS / "models").iterdir()
    if folder.is_dir() and folder.name != "__pycache__")]

keras = kzoo = None  # imported by `pytest_configure`, where tests run


def _xdist_controller(config):
    """Whether this process only hands tests to pytest-xdist workers."""
    return bool(getattr(config.option, "numprocesses", None)) and \
        not hasattr(config, "workerinput")


def pytest_configure(config):
    """Import the libraries where tests run. xdist's controller runs none:
    importing them there (~7 s, before it starts the workers, which import
    them again) only delayed every pass."""
    if _xdist_controller(config):
        return
    global keras, kzoo
    import keras
    import kzoo

    # TensorFlow's graph optimizer (grappler) rewrites each function graph
    # the first time it runs; the tests run most graphs once or twice, on
    # tiny inputs, so the rewrite costs more than it saves (TensorFlow-heavy
    # test files: 5-6% less CPU without it; keras-hub's byte-level BPE
    # graph starts in 0.9 s instead of 1.4 s in every new tf.data
    # iterator). It changes how a graph runs, not what it computes, as
    # XLA's optimisation level above. KZOO_TEST_GRAPH_OPTIMIZER=on keeps it.
    if os.environ.get("KZOO_TEST_GRAPH_OPTIMIZER") != "on":
        import tensorflow as tf  # (kzoo imported it already)
        tf.config.optimizer.set_experimental_options(
            {"disable_meta_optimizer": True})

    # What is imported by now (TensorFlow, Keras, torch, jax,
    # transformers: ~680,000 objects) lives for the whole run: out of the
    # garbage collector's sight, each full collection (one per test file,
    # below, and Python's own) takes microseconds instead of ~0.3 s.
    gc.freeze()


def pytest_report_header(config):
    backend = keras.backend.backend() if keras else \
        os.environ.get("KERAS_BACKEND", "Keras' default")
    return f"keras backend: {backend}"


# Each file's time in this backend's pass (scripts/record_test_durations.py
# writes the table from a full run).
_DURATIONS = Path(__file__).resolve().parent / "durations.json"
# A file the table has not seen yet: a typical file's time, so a new long
# file is not left to the end.
_UNKNOWN_FILE_SECONDS = 10.0


def pytest_collection_modifyitems(config, items):
    """Longest files first. scripts/run_tests.sh hands out whole files
    (`--dist loadfile --no-loadscope-reorder`: collection order); xdist's
    own order (most tests first) left the one-test guide smokes and the
    cross-backend file, a minute to five each, to the end of a pass while
    the other worker idled. The sort is stable: tests keep their order
    within a file."""
    seconds = json.loads(_DURATIONS.read_text()).get(
        keras.backend.backend(), {}) if _DURATIONS.is_file() else {}

    def file_seconds(item):
        path = Path(os.path.relpath(item.path, config.rootpath)).as_posix()
        return seconds.get(path, _UNKNOWN_FILE_SECONDS)

    items.sort(key=lambda item: -file_seconds(item))


# The model families' folders whose tests run in every backend's pass.
# BERT is the reference family: its tests drive `Task`'s own fit, predict,
# tf.data and mixed-precision paths, which differ by backend.
_FAMILIES_ON_EVERY_BACKEND = ("bert",)
_MODELS = Path(__file__).resolve().parent / "models"


def pytest_itemcollected(item):
    """A model family's tests (tests/models/<family>/) are `once`, unless
    the family or the test is marked to run everywhere (`every_backend`).
    A family is keras.ops code with no backend branch, and
    tests/models/test_training_cross_backend.py holds every registered
    task's forward outputs and training step equal on the three backends,
    so its parity and behaviour tests on one backend hold for all three.
    What the cross-backend check cannot compare stays on every backend
    (marked): training steps that draw random numbers (ELECTRA's
    pretrainer) and tasks outside the registry (the Distiller)."""
    path = Path(item.path)
    if path.parent.parent == _MODELS and \
            path.parent.name not in _FAMILIES_ON_EVERY_BACKEND and \
            not item.get_closest_marker("every_backend"):
        item.add_marker(pytest.mark.once)


# A jax worker's resident memory (bytes) above which each test file's
# compiled functions are dropped when it ends.
_JAX_CACHE_LIMIT = 4 * 2**30


def _resident_bytes():
    """This process's resident memory, or None where /proc is absent."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except (OSError, IndexError, ValueError):
        return None
    return pages * os.sysconf("SC_PAGE_SIZE")


@pytest.fixture(autouse=True, scope="module")
def _release_compiled_functions():
    """After each test file, drop what the backends keep for the models it
    built (Keras' global state; jax's compiled executables once the worker
    holds more than _JAX_CACHE_LIMIT): a pytest-xdist worker runs hundreds
    of files, and on jax its memory otherwise grew past 10 GB over one pass
    (the kernel's OOM killer stopped it). Clearing jax's caches after every
    file made the next file compile every eager op again: 9% of a sample
    of files (albert, deberta_v3, probing: 177 s against 161 s)."""
    yield
    keras.backend.clear_session()
    if keras.backend.backend() == "jax":
        resident = _resident_bytes()
        if resident is None or resident > _JAX_CACHE_LIMIT:
            import jax
            jax.clear_caches()
    gc.collect()


# The seed every test starts from. scripts/measure_spread.py runs the
# statistical tests under other seeds (KZOO_TEST_SEED) to measure the
# spread their thresholds must keep clear of.
SEED = int(os.environ.get("KZOO_TEST_SEED", "1234"))


@pytest.fixture(autouse=True)
def _seed(request):
    """Every test starts from the same random state; with
    KZOO_RECORD_HISTORY set, every `fit`'s epoch metrics are appended to
    that file (one JSON line per fit, with the test's id and the seed)."""
    keras.utils.set_random_seed(SEED)
    record = os.environ.get("KZOO_RECORD_HISTORY")
    if not record:
        yield
        return
    history_cls = keras.callbacks.History
    own = history_cls.__dict__.get("on_train_end")
    original = history_cls.on_train_end

    def on_train_end(history, logs=None):
        original(history, logs)
        with open(record, "a") as f:
            f.write(json.dumps({"test": request.node.nodeid, "seed": SEED,
                                "history": history.history},
                               default=float) + "\n")

    history_cls.on_train_end = on_train_end
    try:
        yield
    finally:
        if own is None:
            del history_cls.on_train_end
        else:
            history_cls.on_train_end = own


# What the suite itself reads (run_tests.sh, the MiniLM opt-out, the
# parity log of scripts/parity_report.py); every other KZOO_* variable
# changes what kzoo does (cache, hub endpoint, offline mode, retries, quiet
# output) and is the test's to set.
_TEST_CONTROLS = ("KZOO_TEST_BACKENDS", "KZOO_ONCE_BACKEND",
                  "KZOO_SKIP_MINILM", "KZOO_PARITY_LOG", "KZOO_TEST_SEED",
                  "KZOO_RECORD_HISTORY", "KZOO_TEST_GRAPH_OPTIMIZER")
# huggingface_hub's equivalents (kzoo fetches through it).
_HUB_VARIABLES = ("HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN", "HF_HOME",
                  "HF_HUB_CACHE", "HF_HUB_DISABLE_PROGRESS_BARS")


@pytest.fixture(autouse=True)
def _isolated_environment(tmp_path_factory, monkeypatch):
    """No test sees the developer's KZOO_*/HF_* settings, or reads or
    writes the user's ~/.cache/kzoo or ~/.cache/huggingface: each test gets
    fresh, empty caches."""
    for name in list(os.environ):
        if (name.startswith("KZOO_") and name not in _TEST_CONTROLS) or \
                name in _HUB_VARIABLES:
            monkeypatch.delenv(name)
    monkeypatch.setenv("KZOO_CACHE",
                       str(tmp_path_factory.mktemp("kzoo_cache")))
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path_factory.mktemp("hf_hub")))


@pytest.fixture(scope="session")
def bert_tokenizer():
    """The real bert-base-uncased WordPiece tokenizer (vocab 30,522)."""
    return kzoo.BertTokenizer.from_preset("bert_base_en_uncased")


@pytest.fixture
def tiny_bert():
    from helpers import make_tiny_bert  # (imports Keras: not at module level)
    return make_tiny_bert()
