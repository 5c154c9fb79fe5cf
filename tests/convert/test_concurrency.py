"""Several processes, and processes that die: each test runs real `python`
subprocesses (kzoo imported afresh, in warm interpreters:
tests/warm_python.py) against the loopback hub.

- Two processes ask for the same uncached preset at once: one fetches and
  converts, the other waits on kzoo's lock and then loads the same
  weights; the hub sends the weights once; at no moment does the cache
  hold a partial preset.
- A process killed in the middle of `save_to_preset` over an existing
  preset leaves that preset as it was.
"""

import hashlib
import os
import threading
import time
from pathlib import Path

import keras
import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.utils.files import sha256_of

import warm_python
from convert_helpers import FakeHub, make_hf_bert, named_style_preset, save_hf

# Fetching, locking and staging preset folders do not depend on the
# backend (conversion numerics are checked per backend in test_bert_parity).
pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parents[2]
REPO = "kzoo-test/tiny-bert-concurrent"

FETCH = r"""
import hashlib, sys
import keras, kzoo
print("ready", flush=True)
sys.stdin.readline()
backbone = kzoo.BertBackbone.from_preset(sys.argv[1])
digest = hashlib.sha256()
for weight in backbone.weights:
    digest.update(keras.ops.convert_to_numpy(weight).tobytes())
print("done", digest.hexdigest(), flush=True)
"""

# Saves a different task over the preset at argv[1], and hangs inside the
# write of the weights file named argv[2] (after its first dataset), so
# that the test can kill it there.
SAVE_AND_HANG = r"""
import sys, time
import h5py, keras, kzoo
keras.utils.set_random_seed(7)
task = kzoo.BertTextClassifier.from_preset("bert_tiny", num_classes=5,
                                           load_weights=False)
create_dataset = h5py.Group.create_dataset
def create_and_hang(self, *args, **kwargs):
    result = create_dataset(self, *args, **kwargs)
    if sys.argv[2] in self.file.filename:
        print("hanging", flush=True)
        time.sleep(600)
    return result
h5py.Group.create_dataset = create_and_hang
task.save_to_preset(sys.argv[1])
print("saved", flush=True)
"""


def _env():
    env = warm_python.environment(
        path=[ROOT], KZOO_CACHE=str(presets.cache_dir()),
        # A stalled download must not time out while the test holds it.
        HF_HUB_DOWNLOAD_TIMEOUT="300")
    env.pop("KZOO_QUIET", None)
    return env


class Child:
    """A `python -c script args...` subprocess with a pipe to its stdin,
    whose output lines are read as they arrive."""

    def __init__(self, script, *args, env):
        self.process = warm_python.start(["-c", script, *args], env,
                                         cwd=ROOT, stdin=True)
        self._output = None  # (stdout, stderr) once it has ended

    def _lines(self, stream):
        output = self._output or self.process.output_so_far()
        return output[stream].splitlines()

    def end(self):
        """Kill it if it still runs; keep its output."""
        if self.process.poll() is None:
            self.process.kill()
        self._output = self.process.communicate(timeout=60)

    @property
    def out(self):
        return self._lines(0)

    @property
    def err(self):
        return self._lines(1)

    def wait_for(self, text, timeout=300):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                break
            if any(text in line for line in self.out):
                return True
            time.sleep(0.05)
        return any(text in line for line in self.out)

    def send(self, text):
        self.process.stdin.write(text)
        self.process.stdin.flush()

    def report(self):
        return ("stdout:\n" + "\n".join(self.out[-20:]) + "\nstderr:\n"
                + "\n".join(self.err[-40:]))


def _waiting(children):
    return [child for child in children
            if any("Waiting for another process" in line
                   for line in child.err)]


@pytest.fixture
def hub(tmp_path, monkeypatch):
    folder = save_hf(make_hf_bert("BertModel", "odd20"), tmp_path / "hf")
    hub = FakeHub(tmp_path / "hub")
    hub.add_repo(REPO, folder)
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    yield hub, folder
    hub.stop()


def test_two_processes_fetch_one_preset_once(hub, tmp_path):
    hub, hf_folder = hub
    preset = named_style_preset(
        tmp_path, hf_folder, REPO,
        [{"name": "config.json"}, {"name": "model.safetensors"}])
    dest = presets.cache_dir() / preset.name
    # The weights download stalls halfway until the second process is
    # seen waiting on the lock, so the two really overlap.
    stalled = threading.Event()
    hub.delay["model.safetensors"] = stalled

    children = [Child(FETCH, preset, env=_env()) for _ in range(2)]
    try:
        for child in children:
            assert child.wait_for("ready"), child.report()
        seen = []  # every listing of the converted preset while it runs
        running = threading.Event()
        running.set()

        def watch():
            while running.is_set():
                if dest.exists():
                    try:
                        seen.append(tuple(sorted(os.listdir(dest))))
                    except FileNotFoundError:
                        seen.append(("<vanished>",))
                time.sleep(0.01)

        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        for child in children:
            child.send("go\n")
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and not _waiting(children):
            time.sleep(0.05)
        waited = _waiting(children)
        stalled.set()
        for child in children:
            child.process.wait(timeout=300)
        running.clear()
        watcher.join()
    finally:
        stalled.set()
        for child in children:
            child.end()

    reports = "\n\n".join(child.report() for child in children)
    assert [c.process.returncode for c in children] == [0, 0], reports
    assert len(waited) == 1, reports
    digests = {line.split()[1] for child in children for line in child.out
               if line.startswith("done ")}
    assert len(digests) == 1, reports
    # One download, by the process that held the lock.
    assert hub.fetched("model.safetensors") == 1
    assert hub.fetched("config.json") == 1
    assert "Downloading" not in "\n".join(waited[0].err)
    # The preset appeared whole: every listing seen is the final one.
    final = tuple(sorted(os.listdir(dest)))
    assert {"metadata.json", presets.BACKBONE_WEIGHTS} <= set(final)
    assert seen and set(seen) == {final}
    # And both processes loaded what is in it.
    backbone = kzoo.BertBackbone.from_preset(str(preset))
    digest = hashlib.sha256()
    for weight in backbone.weights:
        digest.update(keras.ops.convert_to_numpy(weight).tobytes())
    assert digests == {digest.hexdigest()}


def _listing(folder):
    return {path.name: sha256_of(path) for path in Path(folder).iterdir()
            if path.is_file() and not path.name.startswith(".")}


@pytest.mark.parametrize("weights_file", [presets.BACKBONE_WEIGHTS,
                                          presets.TASK_WEIGHTS])
def test_killed_save_to_preset_leaves_the_old_preset(tmp_path, weights_file):
    dest = tmp_path / "my_model"
    old = kzoo.BertTextClassifier.from_preset("bert_tiny", num_classes=2,
                                              load_weights=False)
    old.save_to_preset(dest)
    before = _listing(dest)

    child = Child(SAVE_AND_HANG, dest, weights_file, env=_env())
    try:
        assert child.wait_for("hanging"), child.report()
        child.process.kill()
        child.process.wait(timeout=60)
    finally:
        child.end()

    # Every file is the old one; only hidden temporaries may be left over.
    assert _listing(dest) == before
    loaded = kzoo.BertTextClassifier.from_preset(str(dest))
    assert loaded.num_classes == 2
    for a, b in zip(old.weights, loaded.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))
