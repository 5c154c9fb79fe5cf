"""tests/warm_python.py runs a script as `python SCRIPT` would: argv,
`__name__`, its folder on `sys.path`, the request's environment and
working folder, exit codes (SystemExit's, 1 with a traceback for an
exception, a signal's negative), `atexit` handlers, and a timeout that
kills it. (The servers here preload `json` alone: what is checked is the
fork, not the imports; the suite's guides and workers check those.)"""

import os
import subprocess
import sys
import time

import pytest

import warm_python

pytestmark = pytest.mark.once

LIGHT = ("json",)

SCRIPT = r"""
import atexit, json, os, sys
atexit.register(lambda: print("atexit ran"))
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                  "cwd": os.getcwd(), "setting": os.environ.get("KZOO_X")}))
sys.stderr.write("to stderr\n")
what = sys.argv[1]
if what == "exit":
    sys.exit(3)
if what == "raise":
    raise ValueError("no good")
if what == "sleep":
    import time; time.sleep(60)
"""


@pytest.fixture
def script(tmp_path):
    path = tmp_path / "folder" / "script.py"
    path.parent.mkdir()
    path.write_text(SCRIPT)
    return path


def _both(script, tmp_path, what, **settings):
    env = {**os.environ, **settings}
    argv = [script, what]
    warm = warm_python.run(argv, env, cwd=tmp_path, timeout=120,
                           preload=LIGHT)
    fresh = subprocess.run([sys.executable, *map(str, argv)], env=env,
                           cwd=tmp_path, capture_output=True, text=True)
    return warm, fresh


@pytest.mark.parametrize("what,code", [("ok", 0), ("exit", 3),
                                       ("raise", 1)])
def test_same_as_a_fresh_interpreter(script, tmp_path, what, code):
    warm, fresh = _both(script, tmp_path, what, KZOO_X=what)
    assert warm.returncode == fresh.returncode == code
    assert warm.stdout == fresh.stdout
    assert f'"setting": "{what}"' in warm.stdout
    assert '"name": "__main__"' in warm.stdout
    assert f'"path0": "{script.parent}"' in warm.stdout
    assert f'"cwd": "{tmp_path}"' in warm.stdout
    assert warm.stdout.rstrip().endswith("atexit ran")
    assert warm.stderr.startswith("to stderr")
    if what == "raise":
        assert warm.stderr.rstrip().endswith("ValueError: no good")


def test_settings_read_per_run_share_one_server(script, tmp_path):
    env = {**os.environ}
    first = warm_python.start([script, "ok"], {**env, "KZOO_X": "a"},
                              preload=LIGHT)
    second = warm_python.start([script, "ok"], {**env, "KZOO_X": "b"},
                               preload=LIGHT)
    assert first._server is second._server
    assert '"setting": "a"' in first.communicate(120)[0]
    assert '"setting": "b"' in second.communicate(120)[0]
    # TensorFlow reads TF_* at import, Keras KERAS_BACKEND: other servers.
    for name, value in (("TF_CPP_MIN_LOG_LEVEL", "1"),
                        ("KERAS_BACKEND", "another")):
        assert warm_python.server_key({**env, name: value}) != \
            warm_python.server_key(env)


def test_timeout_kills_the_script(script, tmp_path):
    with pytest.raises(subprocess.TimeoutExpired):
        warm_python.run([script, "sleep"], dict(os.environ), timeout=2,
                        preload=LIGHT)


def test_wait_and_poll_leave_it_running_until_killed(script):
    process = warm_python.start([script, "sleep"], dict(os.environ),
                                preload=LIGHT)
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)
    assert process.poll() is None
    process.kill()
    assert process.wait(timeout=30) == -9


def test_sys_path_and_xla_flags_as_a_fresh_interpreter_has_them(tmp_path):
    # Both are read per run: one server serves every value.
    code = "import os, sys; print(sys.path); print(os.environ['XLA_FLAGS'])"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        ["relative", "", str(tmp_path / "absolute"), ""]), "XLA_FLAGS": "x"}
    warm = warm_python.run(["-c", code], env, cwd=tmp_path, timeout=120,
                           preload=LIGHT)
    fresh = subprocess.run([sys.executable, "-c", code], env=env,
                           cwd=tmp_path, capture_output=True, text=True)
    assert warm.stdout == fresh.stdout
    assert warm_python.server_key(env, LIGHT) == warm_python.server_key(
        {k: v for k, v in env.items() if k not in ("PYTHONPATH", "XLA_FLAGS")},
        LIGHT)


def test_stdin_and_output_while_it_runs():
    # As `Popen(stdin=PIPE)`: a line written reaches the script, closing
    # the stream is the end of its input; what it prints with a flush can
    # be read before it ends.
    code = ("import sys; print('ready', flush=True); "
            "print('got', sys.stdin.readline().strip()); "
            "print('then', repr(sys.stdin.read()))")
    process = warm_python.start(["-c", code], dict(os.environ),
                                preload=LIGHT, stdin=True)
    deadline = time.monotonic() + 60
    while "ready" not in process.output_so_far()[0]:
        assert time.monotonic() < deadline and process.poll() is None
        time.sleep(0.05)
    assert "got" not in process.output_so_far()[0]  # waits for its line
    process.stdin.write("go\n")
    process.stdin.flush()
    warm = process.communicate(timeout=60)
    fresh = subprocess.run([sys.executable, "-c", code], input="go\n",
                           capture_output=True, text=True)
    assert warm == (fresh.stdout, fresh.stderr)
    assert warm[0] == "ready\ngot go\nthen ''\n"
    assert process.returncode == 0
