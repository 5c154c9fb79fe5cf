"""Running one benchmark row in a fresh Python process, shared by the
benchmark scripts whose rows are (implementation, backend) pairs.

Each row gets its own process: KERAS_BACKEND is fixed when Keras is
imported, and a fresh process keeps one library's memory and thread
pools out of another's timing. The worker prints `RESULT <json>` as its
last such line; anything else it prints is ignored unless it fails.
"""

import json
import os
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def run_worker(script, worker, backend, options, timeout):
    """Run `script --worker <worker> --options <json>` under `backend`;
    its result row, with `process_s` (the process's wall time), or
    `{"error": ...}` (a timeout, or the last lines it printed).

    `options["threads"]` (when set) gives every backend the same number
    of compute threads (1 also stops XLA's own thread pool)."""
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    threads = options.get("threads")
    if threads:
        n = str(threads)
        env.update(OMP_NUM_THREADS=n, MKL_NUM_THREADS=n,
                   TF_NUM_INTRAOP_THREADS=n, TF_NUM_INTEROP_THREADS="1")
        if threads == 1:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " "
                                "--xla_cpu_multi_thread_eigen=false "
                                "intra_op_parallelism_threads=1").strip()
    env["PYTHONPATH"] = str(REPO) + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, str(Path(script).resolve()), "--worker",
               worker, "--options", json.dumps(options)]
    start = time.perf_counter()
    try:
        result = subprocess.run(command, env=env, capture_output=True,
                                text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout}s"}
    for line in reversed(result.stdout.splitlines()):
        if line.startswith("RESULT "):
            row = json.loads(line[len("RESULT "):])
            row["process_s"] = time.perf_counter() - start
            return row
    tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
    return {"error": " | ".join(tail) or f"exit {result.returncode}"}
