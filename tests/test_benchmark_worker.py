"""scripts/benchmark_worker.py: a row runs in its own process under the
asked backend and threads, and its result, failure or timeout comes back
as a row."""

import sys
from pathlib import Path

import pytest

from script_loading import load_script

pytestmark = pytest.mark.once  # no backend of its own: the first pass only

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / \
    "benchmark_worker.py"
WORKER = '''
import json, os, sys
args = dict(zip(sys.argv[1::2], sys.argv[2::2]))
options = json.loads(args["--options"])
if args["--worker"] == "fails":
    sys.exit("no such library: " + options["library"])
if args["--worker"] == "sleeps":
    import time; time.sleep(30)
print("noise")
print("RESULT " + json.dumps({"backend": os.environ["KERAS_BACKEND"],
                              "threads": os.environ.get("OMP_NUM_THREADS"),
                              "xla": os.environ.get("XLA_FLAGS", "")}))
'''


@pytest.fixture(scope="module")
def run_worker():
    sys.path.insert(0, str(SCRIPT.parent))
    return load_script(SCRIPT).run_worker


def test_a_row_comes_back_with_its_backend_and_threads(run_worker,
                                                       tmp_path,
                                                       monkeypatch):
    monkeypatch.delenv("OMP_NUM_THREADS", raising=False)  # conftest's
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    row = run_worker(script, "ok", "jax", {"threads": 1}, timeout=60)
    assert row["backend"] == "jax" and row["threads"] == "1"
    assert "--xla_cpu_multi_thread_eigen=false" in row["xla"]
    assert row["process_s"] > 0
    row = run_worker(script, "ok", "torch", {}, timeout=60)
    assert row["backend"] == "torch" and row["threads"] is None


def test_failures_and_timeouts_are_rows_saying_so(run_worker, tmp_path):
    script = tmp_path / "worker.py"
    script.write_text(WORKER)
    row = run_worker(script, "fails", "jax", {"library": "nope"},
                     timeout=60)
    assert row == {"error": "no such library: nope"}
    assert run_worker(script, "sleeps", "jax", {}, timeout=1) == {
        "error": "timed out after 1s"}
