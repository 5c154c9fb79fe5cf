"""Corpora and runs behind URLs (kzoo/utils/storage.py): prepared from and
into S3, pretrained with checkpoints and the preset on S3, against a real
S3 API (moto's server, started here on loopback), and equal to the same
run on local folders.

Prepare s3:// text into an s3:// corpus, pretrain with checkpoints on
s3://, kill after a committed checkpoint, leave a later checkpoint
without its commit marker (an upload cut short), resume, and compare
with the same run on local paths (per-step losses and final weights
within 1e-6), the preset loaded from its URL; the same round trip on
fsspec's `memory://` (the generic fsspec path that gs://, hf:// and the
other stores take: no s3fs, no credentials check); what a failed upload
leaves (the commit protocol on `memory://`), and each bad input's
one-line error. gs:// and hf:// themselves are not run here (no
emulator): only the one-line error for a missing gcsfs is. All once:
what goes through storage is files and NumPy arrays, whatever the
backend (the file passed on torch, jax and, 2026-11-29, tensorflow: 4
passed in 107 s), and test_resume.py holds each backend's exact
resume."""

import json
import os
import sys
from pathlib import Path

import fsspec  # the kzoo[cloud] extra (in dev)
import numpy as np
import pytest
import s3fs

import pretraining_testing
from kzoo.corpus import Corpus, prepare_corpus
from kzoo.pretraining import checkpoints
from kzoo.pretraining.remote_output import RemoteOutput
from kzoo.pretraining.run import pretrain
from kzoo.utils import storage
from kzoo.utils.storage import COMMIT_MARKER, StorageError

pytestmark = pytest.mark.once

STEPS = 4
OPTIONS = dict(objective="mlm", from_scratch=True, max_steps=STEPS,
               batch_size=4, sequence_length=32, checkpoint_every=2,
               learning_rate=1e-3, warmup_steps=1, seed=5, verbose=0)
BUCKET = "kzoo-test"
CREDENTIALS = {"AWS_ACCESS_KEY_ID": "testing",
               "AWS_SECRET_ACCESS_KEY": "testing",
               "AWS_DEFAULT_REGION": "us-east-1",
               # No profile or file of the machine's may change the test.
               "AWS_SHARED_CREDENTIALS_FILE": "/nonexistent",
               "AWS_CONFIG_FILE": "/nonexistent"}


@pytest.fixture(scope="module")
def s3(tmp_path_factory):
    """A moto S3 server on loopback, its endpoint and dummy credentials in
    the environment, kzoo's cache in a temporary folder; yields the
    bucket's URL."""
    from moto.server import ThreadedMotoServer
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0,
                                verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    saved = {name: os.environ.get(name) for name in
             [*CREDENTIALS, "AWS_ENDPOINT_URL", "KZOO_CACHE"]}
    os.environ.update(CREDENTIALS,
                      AWS_ENDPOINT_URL=f"http://{host}:{port}",
                      KZOO_CACHE=str(tmp_path_factory.mktemp("cache")))
    s3fs.S3FileSystem.clear_instance_cache()
    fs = fsspec.filesystem("s3")
    fs.mkdir(BUCKET)
    try:
        yield f"s3://{BUCKET}"
    finally:
        server.stop()
        s3fs.S3FileSystem.clear_instance_cache()
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


@pytest.fixture(scope="module")
def local_run(tmp_path_factory):
    """The preset, the text and the uninterrupted run on local folders."""
    root = tmp_path_factory.mktemp("local")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus",
                                                     preset)
    summary = pretrain(str(preset), str(corpus), root / "run", **OPTIONS)
    assert summary["steps_this_run"] == STEPS
    return root, str(preset), root / "corpus_text"


class Killed(BaseException):
    """A kill right after a checkpoint's upload was committed."""


def losses(metrics_lines):
    return {r["step"]: r["loss"] for r in map(json.loads, metrics_lines)
            if "loss" in r}


def weights(folder):
    with np.load(Path(folder) / "variables.npz") as data:
        return [data[key] for key in sorted(data)]


def test_prepare_pretrain_kill_and_resume_on_s3_equal_the_local_run(
        s3, local_run, monkeypatch):
    assert_round_trip_equals_the_local_run(
        s3, fsspec.filesystem("s3"), local_run, monkeypatch)


def test_the_same_round_trip_on_fsspec_memory(local_run, monkeypatch,
                                              tmp_path):
    """The path every other store takes (gs://, hf://, ...): fsspec's
    own API and nothing of s3fs', no credentials to check; memory://
    has no rename either."""
    monkeypatch.setenv("KZOO_CACHE", str(tmp_path / "cache"))
    fs = fsspec.filesystem("memory")
    try:
        assert_round_trip_equals_the_local_run(
            "memory://kzoo-round-trip", fs, local_run, monkeypatch)
    finally:
        fs.rm("kzoo-round-trip", recursive=True)


def assert_round_trip_equals_the_local_run(root_url, fs, local_run,
                                           monkeypatch):
    root, preset, text = local_run
    bucket = root_url.split("://", 1)[1]
    fs.put(str(text), f"{bucket}/text", recursive=True)
    summary = prepare_corpus(f"{root_url}/text", f"{root_url}/corpus",
                             preset, processes=1, progress=False)
    assert not summary["up_to_date"]
    assert storage.is_committed(f"{root_url}/corpus")
    # The same corpus as the local preparation's, shard for shard.
    remote, local = Corpus(f"{root_url}/corpus"), Corpus(root / "corpus")
    assert [s.record for s in remote.shards] == \
        [s.record for s in local.shards]
    # Prepared again: the URL's manifest says up to date, nothing written.
    marker = storage.read_commit(f"{root_url}/corpus")
    again = prepare_corpus(f"{root_url}/text", f"{root_url}/corpus", preset,
                           processes=1, progress=False)
    assert again["up_to_date"]
    assert storage.read_commit(f"{root_url}/corpus") == marker

    publish = RemoteOutput.publish_checkpoint

    def publish_then_die(self, folder, metrics_path, keep):
        publish(self, folder, metrics_path, keep)
        if folder.name == checkpoints.checkpoint_name(2):
            raise Killed()

    run = f"{root_url}/run"
    with monkeypatch.context() as patch, pytest.raises(Killed):
        patch.setattr(RemoteOutput, "publish_checkpoint", publish_then_die)
        pretrain(preset, f"{root_url}/corpus", run, **OPTIONS)
    # An upload of checkpoint 4 that a kill cut short: its files, no
    # marker. The resume ignores it (and removes it).
    cut = f"{bucket}/run/checkpoints/{checkpoints.checkpoint_name(4)}"
    fs.pipe(f"{cut}/variables.npz", b"half")
    assert not storage.is_committed(f"{root_url}/run/checkpoints/"
                                    f"{checkpoints.checkpoint_name(4)}")
    resumed = pretrain(preset, f"{root_url}/corpus", run, **OPTIONS)
    assert resumed["resumed_from"] == 2
    assert resumed["preset"] == f"{run}/preset"
    # Step 4 was trained again and committed over what the cut left.
    assert storage.is_committed(f"{root_url}/run/checkpoints/"
                                f"{checkpoints.checkpoint_name(4)}")
    assert fs.cat(f"{cut}/variables.npz") != b"half"

    # Equal to the uninterrupted local run: losses and final weights.
    got = losses(fs.cat(f"{bucket}/run/metrics.jsonl").decode()
                 .splitlines())
    want = losses((root / "run" / "metrics.jsonl").read_text()
                  .splitlines())
    assert sorted(got) == list(range(1, STEPS + 1)) == sorted(want)
    assert max(abs(got[s] - want[s]) for s in want) <= 1e-6
    final = checkpoints.checkpoint_name(STEPS)
    fetched = storage.download_committed(
        f"{run}/checkpoints/{final}", root / f"fetched_{bucket}")
    for a, b in zip(weights(fetched),
                    weights(root / "run" / "checkpoints" / final)):
        np.testing.assert_allclose(a, b, atol=1e-6)

    # The preset committed at the URL loads by its URL.
    import kzoo
    task = kzoo.BertMaskedLM.from_preset(f"{run}/preset")
    local_task = kzoo.BertMaskedLM.from_preset(str(root / "run" / "preset"))
    for a, b in zip(task.get_weights(), local_task.get_weights()):
        np.testing.assert_allclose(a, b, atol=1e-6)


# --- the commit protocol (memory://: no server) ---------------------------
def test_a_failed_upload_leaves_no_marker_and_no_files(tmp_path,
                                                        monkeypatch):
    folder = tmp_path / "folder"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.bin").write_bytes(b"a" * 10)
    (folder / "sub" / "b.bin").write_bytes(b"b" * 20)
    (folder / ".lock").write_bytes(b"")  # hidden: never uploaded
    url = "memory://commit-test/folder"
    marker = storage.commit_folder(folder, url)
    assert marker["files"] == {"a.bin": 10, "sub/b.bin": 20}
    assert storage.remote_files(url) == ["a.bin", COMMIT_MARKER,
                                         "sub/b.bin"]
    assert storage.download_committed(url, tmp_path / "copy") \
        .joinpath("sub/b.bin").read_bytes() == b"b" * 20

    # Written again, failing on the marker (the last write): the old
    # version is uncommitted first, and nothing of the new one is left.
    fs = fsspec.filesystem("memory")
    real_pipe = type(fs).pipe_file

    def failing_pipe(self, path, value, **kwargs):
        if path.endswith(COMMIT_MARKER):
            raise OSError("connection reset")
        return real_pipe(self, path, value, **kwargs)

    monkeypatch.setattr(type(fs), "pipe_file", failing_pipe)
    with pytest.raises(StorageError, match="connection reset"):
        storage.commit_folder(folder, url)
    monkeypatch.undo()
    assert storage.remote_files(url) == []
    with pytest.raises(StorageError, match="no committed folder"):
        storage.download_committed(url, tmp_path / "copy2")


def test_a_corpus_without_its_marker_is_refused_in_one_line(tmp_path):
    fs = fsspec.filesystem("memory")
    fs.pipe("/half-corpus/manifest.json", b"{}")
    with pytest.raises(StorageError) as caught:
        Corpus("memory://half-corpus")
    message = str(caught.value)
    assert "\n" not in message
    assert "memory://half-corpus holds no committed corpus" in message
    assert "kzoo prepare-corpus" in message


# --- bad input (S3; nothing written there) ---------------------------------
def test_bad_urls_and_credentials_are_refused_before_any_work(
        s3, local_run, monkeypatch, tmp_path):
    _, preset, text = local_run
    fs = fsspec.filesystem("s3")
    before = sorted(fs.find(BUCKET))

    def refused(match, call):
        with pytest.raises(StorageError) as caught:
            call()
        message = str(caught.value)
        assert "\n" not in message, message
        assert match in message, message
        return message

    # An input that does not exist; a bucket that does not exist.
    refused("Cannot read s3://kzoo-test/nothing-here: it does not exist",
            lambda: prepare_corpus(f"{s3}/nothing-here", f"{s3}/c1", preset,
                                   progress=False))
    refused("Cannot write to s3://no-such-bucket/c: it does not exist",
            lambda: prepare_corpus(str(text), "s3://no-such-bucket/c",
                                   preset, progress=False))
    refused("Cannot write to s3://no-such-bucket/run",
            lambda: pretrain(preset, str(text), "s3://no-such-bucket/run",
                             **OPTIONS))
    # A corpus URL with nothing committed there.
    refused(f"{s3}/no-corpus holds no committed corpus",
            lambda: pretrain(preset, f"{s3}/no-corpus",
                             tmp_path / "run", **OPTIONS))
    # No credentials.
    for name in ("AWS_ACCESS_KEY_ID", "AWS_SECRET_ACCESS_KEY"):
        monkeypatch.delenv(name)
    s3fs.S3FileSystem.clear_instance_cache()
    message = refused("no credentials for s3:// were found", lambda:
                      prepare_corpus(str(text), f"{s3}/c2", preset,
                                     progress=False))
    assert "AWS_ACCESS_KEY_ID" in message
    monkeypatch.undo()
    s3fs.S3FileSystem.clear_instance_cache()
    # The extra not installed: gcsfs (named in the docs, not in
    # kzoo[cloud]), or fsspec itself.
    message = refused("gs:// needs gcsfs, which is not installed",
                      lambda: Corpus("gs://some-bucket/corpus"))
    assert 'pip install "kzoo[cloud]" gcsfs' in message
    monkeypatch.setitem(sys.modules, "fsspec", None)
    refused('needs fsspec, which is not installed. Run `pip install '
            '"kzoo[cloud]"`', lambda: Corpus(f"{s3}/corpus"))
    monkeypatch.undo()
    assert sorted(fs.find(BUCKET)) == before

