"""Scripts run in warm interpreters: `run`/`start` behave like
`subprocess.run`/`Popen` of `python SCRIPT ARGS...`, minus the ~7 s of
CPU a fresh interpreter spends importing TensorFlow, Keras, torch and jax.

Why: the guides' smoke runs and the cross-backend workers each start an
interpreter that spends most of its time importing (a guide's smoke run:
~8 s of its ~10 s), and one pass of the suite starts ~30 of them.

How: per environment, a server started on first use imports the heavy
third-party libraries, then forks one child per script. The child takes
the request's environment, working directory and argv, runs the script
as `python SCRIPT` does (`runpy.run_path` as `__main__`, its folder
first on `sys.path`) and leaves through the interpreter's normal exit, so
`atexit` handlers run.

What keeps the child the same as a fresh interpreter:
- the server imports only libraries, never kzoo, which reads settings
  (`KZOO_CACHE`...) a script may set itself before importing it;
- it never runs an op, so no thread pool of TensorFlow, torch or XLA
  exists to be lost in the fork (they start on first use, in the child);
- a server serves only requests with its own environment (TensorFlow and
  Keras read theirs at import), bar the variables read only when a
  script runs (`PER_RUN_PREFIXES`): in practice one server per backend.
"""

import atexit
import json
import os
import select
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# Read when a script runs, not by any library at import: pytest's name
# of the running test; kzoo's and huggingface_hub's settings (each test
# sets its own caches: Keras imports huggingface_hub, whose `constants`
# then hold the server's values, but kzoo reads these variables when it
# runs and passes them on, kzoo/convert/download.py); XLA's flags (read
# when jax or TensorFlow first compiles, in the child); PYTHONPATH (the
# child rebuilds `sys.path` from its own, `_python_path`).
PER_RUN_PREFIXES = ("KZOO_", "HF_", "PYTEST_CURRENT_TEST", "XLA_FLAGS",
                    "PYTHONPATH")


def _per_run(name):
    return name.startswith(PER_RUN_PREFIXES)


# What the server imports: each script imports them again in no time.
PRELOAD = ("numpy", "tensorflow", "keras", "jax")


def _serve(preload):
    """The server: imports `preload`, then reads one JSON request per
    line on stdin and writes one line on stdout when a child starts
    ({"id", "pid"}) and when it ends ({"id", "exit"}). Ends, killing its
    children, when stdin closes."""
    import importlib
    protocol = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # the libraries' own prints go to stderr, not the protocol
    for module in preload:
        importlib.import_module(module)
    assert "kzoo" not in sys.modules, "kzoo reads its settings at import"
    # The server is started without PYTHONPATH: past the script's folder,
    # its sys.path is the interpreter's own.
    assert "PYTHONPATH" not in os.environ
    global _INTERPRETER_PATH
    _INTERPRETER_PATH = sys.path[1:]
    protocol.write(json.dumps({"ready": True}) + "\n")
    children = {}
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.05)
        if readable:
            chunk = os.read(0, 65536)
            if not chunk:
                for pid in children:
                    _kill_group(pid)
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                request = json.loads(line)
                sys.stdout.flush()
                sys.stderr.flush()
                pid = os.fork()
                if pid == 0:
                    protocol.close()
                    _child(request)  # never returns
                children[pid] = request["id"]
                protocol.write(json.dumps({"id": request["id"],
                                           "pid": pid}) + "\n")
        while children:
            pid, status = os.waitpid(-1, os.WNOHANG)
            if pid == 0:
                break
            protocol.write(json.dumps({
                "id": children.pop(pid),
                "exit": os.waitstatus_to_exitcode(status)}) + "\n")


def _child(request):
    """Become `python ARGV` in the request's environment and folder."""
    os.setsid()  # its own process group: a timeout kills what it started
    os.environ.clear()
    os.environ.update(request["env"])
    os.chdir(request["cwd"])
    # stdin: the client's pipe (a FIFO it holds open), else nothing.
    os.dup2(os.open(request["stdin"] or os.devnull, os.O_RDONLY), 0)
    os.dup2(os.open(request["stdout"], os.O_WRONLY | os.O_TRUNC), 1)
    if request["stderr"] is None:  # into stdout, as `2>&1`
        os.dup2(1, 2)
    else:
        os.dup2(os.open(request["stderr"], os.O_WRONLY | os.O_TRUNC), 2)
    argv = request["argv"]
    if argv[0] == "-c":
        import types
        sys.argv = ["-c", *argv[2:]]
        sys.path[:] = _python_path("")
        code = compile(argv[1], "<string>", "exec")
        main = sys.modules["__main__"] = types.ModuleType("__main__")
        run = lambda: exec(code, main.__dict__)  # noqa: E731
    else:
        import runpy
        sys.argv = list(argv)
        sys.path[:] = _python_path(str(Path(argv[0]).resolve().parent))
        run = lambda: runpy.run_path(argv[0], run_name="__main__")  # noqa
    # The interpreter's own exit from here: SystemExit's code, a
    # traceback and 1 for any other exception, as `python SCRIPT` gives.
    raise SystemExit(_run_as_main(run))


_INTERPRETER_PATH = None


def _python_path(first):
    """`sys.path` as Python 3.11 builds it at start-up: the script's
    folder ("" for -c), then PYTHONPATH's entries (made absolute, an
    empty one is the working folder, a trailing one is dropped), then the
    interpreter's own."""
    entries = os.environ.get("PYTHONPATH", "").split(os.pathsep)
    if entries[-1] == "":
        entries.pop()
    return [first, *(os.path.abspath(entry) if entry else os.getcwd()
                     for entry in entries), *_INTERPRETER_PATH]


def _run_as_main(run):
    import traceback
    try:
        run()
    except SystemExit as done:
        return done.code
    except BaseException:  # noqa: BLE001 -- printed as Python prints it
        traceback.print_exc()
        return 1
    return 0


def _kill_group(pid):
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


class _Server:
    """The client side of one server."""

    def __init__(self, env, preload):
        # Unbuffered: `select` sees the pipe, so a line read ahead into a
        # buffer would go unseen.
        self.process = subprocess.Popen(
            [sys.executable, __file__, *preload], env=env,
            stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, bufsize=0)
        self.results = {}
        self.next_id = 0
        self._read_until(lambda message: message.get("ready"), timeout=300)

    def alive(self):
        return self.process.poll() is None

    def _read_until(self, done, timeout):
        deadline = time.monotonic() + timeout
        while True:
            left = max(0.0, deadline - time.monotonic())
            readable, _, _ = select.select([self.process.stdout], [], [],
                                           left)
            if not readable:
                if time.monotonic() >= deadline:
                    raise subprocess.TimeoutExpired("warm python", timeout)
                continue
            line = self.process.stdout.readline()
            if not line:
                raise RuntimeError("the warm python server exited")
            message = json.loads(line)
            if done(message):
                return message
            self.results[message["id"]] = message

    def start(self, request):
        self.next_id += 1
        request = {**request, "id": self.next_id}
        self.process.stdin.write((json.dumps(request) + "\n").encode())
        self.process.stdin.flush()
        message = self._read_until(
            lambda m: m.get("id") == request["id"] and "pid" in m, 60)
        return request["id"], message["pid"]

    def wait(self, request_id, timeout):
        if request_id in self.results and "exit" in \
                self.results[request_id]:
            return self.results.pop(request_id)["exit"]
        message = self._read_until(
            lambda m: m.get("id") == request_id and "exit" in m, timeout)
        return message["exit"]

    def close(self):
        self.process.stdin.close()
        self.process.wait(timeout=60)


_SERVERS = {}


def server_key(env, preload=PRELOAD):
    """Requests with equal keys share a server."""
    return json.dumps([list(preload), {k: v for k, v in sorted(env.items())
                                       if not _per_run(k)}])


def _server_for(env, preload):
    key = server_key(env, preload)
    server = _SERVERS.get(key)
    if server is None or not server.alive():
        server = _SERVERS[key] = _Server(
            {k: v for k, v in env.items() if not _per_run(k)}, preload)
    return server


@atexit.register
def _close_servers():
    for server in _SERVERS.values():
        if server.alive():
            server.close()


class WarmProcess:
    """A started script: `wait`, `kill`, `pid`, and its output (text)
    once it has ended, as `subprocess.Popen` with `stdout=PIPE,
    stderr=PIPE` (or `stderr=STDOUT` when `merge_stderr`), `text=True`
    after `communicate`. With `stdin=True`, `stdin` is a text stream to
    the script (`stdin=PIPE`); `output_so_far` reads what it has written
    while it runs."""

    def __init__(self, argv, env, cwd, merge_stderr=False, preload=PRELOAD,
                 stdin=False):
        self._server = _server_for(env, preload)
        self._folder = tempfile.mkdtemp(prefix="warm_python_")
        self._outputs = [os.path.join(self._folder, "stdout")]
        if not merge_stderr:
            self._outputs.append(os.path.join(self._folder, "stderr"))
        for path in self._outputs:
            open(path, "w").close()
        self.stdin = None
        fifo = None
        if stdin:
            # Opened for reading and writing here first, so that neither
            # side's open waits for the other; the script sees the end of
            # its input when `stdin` is closed, as with a pipe.
            fifo = os.path.join(self._folder, "stdin")
            os.mkfifo(fifo)
            self.stdin = open(os.open(fifo, os.O_RDWR), "w")
        self._id, self.pid = self._server.start({
            "argv": [str(a) for a in argv], "env": dict(env),
            "cwd": str(cwd or os.getcwd()), "stdin": fifo,
            "stdout": self._outputs[0],
            "stderr": None if merge_stderr else self._outputs[1]})
        self.returncode = None

    def output_so_far(self):
        """(stdout, stderr) as written until now (stderr None when
        merged)."""
        outputs = [Path(path).read_text(errors="replace")
                   for path in self._outputs]
        return outputs[0], (outputs[1] if len(outputs) > 1 else None)

    def wait(self, timeout=None):
        """Its exit code; raises subprocess.TimeoutExpired (and leaves it
        running) after `timeout` seconds."""
        if self.returncode is None:
            self.returncode = self._server.wait(
                self._id, 10 ** 6 if timeout is None else timeout)
        return self.returncode

    def poll(self):
        try:
            return self.wait(timeout=0)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        """SIGKILL to it and every process it started (its own group)."""
        _kill_group(self.pid)

    def communicate(self, timeout=None):
        """(stdout, stderr) after the script ends (stderr None when
        merged into stdout)."""
        if self.stdin is not None:
            self.stdin.close()
        self.wait(timeout)
        outputs = self.output_so_far()
        shutil.rmtree(self._folder)
        return outputs


def environment(backend=None, path=(), **settings):
    """This process's environment for a script on `backend` (this one's
    by default), TensorFlow's start-up chatter off, the folders `path`
    first on PYTHONPATH: the one the guides, workers and snippets share,
    so that they share a server too."""
    python_path = os.pathsep.join(filter(None, [
        *map(str, path), os.environ.get("PYTHONPATH")]))
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3",
            "KERAS_BACKEND": backend or os.environ.get("KERAS_BACKEND", ""),
            **({"PYTHONPATH": python_path} if python_path else {}),
            **settings}


def start(argv, env, cwd=None, merge_stderr=False, preload=PRELOAD,
          stdin=False):
    """Start `python ARGV` (ARGV: a script and its arguments, or
    ["-c", code, ...]) with this environment, forked from a server that
    imported `preload`; `stdin=True` gives it a pipe to read."""
    return WarmProcess(argv, env, cwd, merge_stderr, preload, stdin)


def run(argv, env, cwd=None, timeout=None, preload=PRELOAD):
    """`subprocess.run([sys.executable, *argv], env=env, cwd=cwd,
    capture_output=True, text=True, timeout=timeout)`, warm."""
    process = start(argv, env, cwd, preload=preload)
    try:
        stdout, stderr = process.communicate(timeout)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
        raise
    return subprocess.CompletedProcess(
        [sys.executable, *argv], process.returncode, stdout, stderr)


if __name__ == "__main__":
    _serve(sys.argv[1:])
