"""tests/warm_python.py runs a script as `python SCRIPT` would: argv,
`__name__`, its folder on `sys.path`, the request's environment and
working folder, exit codes (SystemExit's, 1 with a traceback for an
exception, a signal's negative), `atexit` handlers, and a timeout that
kills it."""

import os
import subprocess
import sys

import pytest

import warm_python

pytestmark = pytest.mark.once

SCRIPT = r"""
import atexit, json, os, sys
atexit.register(lambda: print("atexit ran"))
print(json.dumps({"argv": sys.argv, "name": __name__, "path0": sys.path[0],
                  "cwd": os.getcwd(), "setting": os.environ.get("KZOO_X"),
                  "kzoo_imported": "kzoo" in sys.modules}))
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
    warm = warm_python.run(argv, env, cwd=tmp_path, timeout=120)
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
    assert '"kzoo_imported": false' in warm.stdout
    assert warm.stdout.rstrip().endswith("atexit ran")
    assert warm.stderr.startswith("to stderr")
    if what == "raise":
        assert warm.stderr.rstrip().endswith("ValueError: no good")


def test_settings_read_per_run_share_one_server(script, tmp_path):
    env = {**os.environ}
    first = warm_python.start([script, "ok"], {**env, "KZOO_X": "a"})
    second = warm_python.start([script, "ok"], {**env, "KZOO_X": "b"})
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
        warm_python.run([script, "sleep"], dict(os.environ), timeout=2)


def test_wait_and_poll_leave_it_running_until_killed(script):
    process = warm_python.start([script, "sleep"], dict(os.environ))
    with pytest.raises(subprocess.TimeoutExpired):
        process.wait(timeout=1)
    assert process.poll() is None
    process.kill()
    assert process.wait(timeout=30) == -9
