"""A pretraining run whose OUTPUT is a URL (`s3://`, `gs://`, `hf://`;
`kzoo/utils/storage.py`).

The run works in a local folder, `$KZOO_CACHE/storage/runs/<url>/
process-<i>`, exactly as in a local OUTPUT (its lock, its atomic
checkpoints), and the URL is kept in step with it:

- at the start, the URL's checkpoints are read: the newest one holding
  its commit marker is downloaded (the local folder is emptied first, so
  only what the URL committed is resumed from); folders without a
  marker (an upload a kill cut short) are ignored, and process 0
  deletes them;
- after each local checkpoint, process 0 uploads metrics.jsonl, then
  the checkpoint's files, then its marker (`commit_folder`), then
  deletes the URL's checkpoints beyond `--keep-checkpoints` (marker
  first);
- at the end, the preset and tensorboard/ are committed the same way.

So a run killed at any moment resumes, here or on another machine,
from the last checkpoint whose upload finished. Two runs writing one URL
at once are not guarded against (the lock is a local file).
"""

import re
import shutil

from kzoo.pretraining import checkpoints
from kzoo.utils import storage

_NAME = re.compile(r"^step-(\d{9})$")


class RemoteOutput:
    """The run's URL (`url`) and the local folder it works in."""

    def __init__(self, url):
        from kzoo.presets import cache_dir
        self.url = str(url).rstrip("/")
        # Refuse a URL that cannot be written before any work.
        storage.check_writable(self.url)
        self.cache = storage.cache_path(cache_dir() / "storage" / "runs",
                                        self.url)

    def checkpoints_url(self):
        return storage.join(self.url, checkpoints.CHECKPOINTS)

    def remote_checkpoints(self):
        """`[(step, url, committed)]`, oldest first."""
        fs, path = storage.filesystem(self.url)
        root = f"{path.rstrip('/')}/{checkpoints.CHECKPOINTS}"
        with storage.reporting(self.url, "list"):
            fs.invalidate_cache(root)  # another machine may have written
            try:
                names = [p.rstrip("/").rsplit("/", 1)[-1]
                         for p in fs.ls(root, detail=False)]
            except FileNotFoundError:
                names = []
        found = []
        for name in names:
            match = _NAME.match(name)
            if match:
                url = storage.join(self.checkpoints_url(), name)
                found.append((int(match.group(1)), url,
                              storage.is_committed(url)))
        return sorted(found)

    def pull(self, process_index, chief):
        """The local folder for process `process_index`, holding the
        URL's newest committed checkpoint and its metrics.jsonl."""
        local = self.cache / f"process-{process_index}"
        local.mkdir(parents=True, exist_ok=True)
        for child in local.iterdir():
            if child.name != checkpoints.LOCK:
                if child.is_dir():
                    shutil.rmtree(child)
                else:
                    child.unlink()
        found = self.remote_checkpoints()
        if chief:  # what killed uploads left: never committed, deleted
            for _, url, committed in found:
                if not committed:
                    storage.remove_folder(url)
        committed = [(step, url) for step, url, done in found if done]
        if committed:
            step, url = committed[-1]
            storage.download_committed(
                url, checkpoints.checkpoints_dir(local) /
                checkpoints.checkpoint_name(step), what="checkpoint")
            fs, path = storage.filesystem(self.url)
            with storage.reporting(self.url, "read"):
                has_metrics = fs.exists(
                    f"{path.rstrip('/')}/{checkpoints.METRICS}")
            if has_metrics:
                storage.download_file(self.url, checkpoints.METRICS,
                                      local / checkpoints.METRICS)
        return local

    def upload_file(self, local, name):
        fs, path = storage.filesystem(self.url)
        with storage.reporting(self.url, "write to"):
            fs.put_file(str(local), f"{path.rstrip('/')}/{name}")

    def publish_checkpoint(self, folder, metrics_path, keep):
        """Commit checkpoint `folder` (metrics.jsonl uploaded first: a
        resumed run cuts it to the checkpoint's length), then delete the
        URL's checkpoints beyond the newest `keep`."""
        if metrics_path.exists():
            self.upload_file(metrics_path, checkpoints.METRICS)
        storage.commit_folder(
            folder, storage.join(self.checkpoints_url(), folder.name))
        committed = [url for _, url, done in self.remote_checkpoints()
                     if done]
        for url in committed[:-keep]:
            storage.remove_folder(url)

    def publish_folder(self, folder, name):
        """Commit the local `folder` as URL/`name` (the preset,
        tensorboard/)."""
        if folder.is_dir():
            storage.commit_folder(folder, storage.join(self.url, name))
        return storage.join(self.url, name)

    def remove_run(self, names):
        """--overwrite: the URL's checkpoints and `names` (the preset,
        tensorboard/, metrics.jsonl) deleted."""
        for _, url, _ in self.remote_checkpoints():
            storage.remove_folder(url)
        for name in names:
            storage.remove_folder(storage.join(self.url, name))
