"""Atomic file writes: a reader sees the old file or the new one, never half."""

import json
import os
import shutil
import tempfile
import time
from pathlib import Path


def atomic_write(path, write_fn, suffix=""):
    """Call `write_fn(tmp_path)` then move the result onto `path`.

    `suffix` keeps the temporary name's ending (Keras insists that weight
    files end in `.weights.h5`). On any error the temporary file is removed
    and `path` is untouched.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.partial-", suffix=suffix)
    os.close(fd)
    os.unlink(tmp)  # write_fn creates it; some writers refuse existing files
    try:
        write_fn(tmp)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json(path, data):
    def write(tmp):
        with open(tmp, "w", encoding="utf-8") as f:
            json.dump(data, f, indent=2, sort_keys=True)
            f.write("\n")
    return atomic_write(path, write)


class JSONFileError(ValueError):
    """A JSON file kzoo reads that is not valid JSON (or not UTF-8). The
    message names the file, where it breaks, and what to do."""


DEFAULT_JSON_FIX = ("Restore the file from where it came from, or write it "
                    "again (kzoo writes its files with `save_to_preset`).")


def read_json(path, fix=DEFAULT_JSON_FIX):
    """The parsed contents of the JSON file `path`.

    Every JSON file kzoo reads goes through here, so a corrupt one is
    reported as a `JSONFileError` naming the file, the line and column
    where parsing stopped, and `fix` (what to do about it; or a function
    that says it, called only then), never as a bare `JSONDecodeError`.
    """
    path = Path(path)
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except UnicodeDecodeError as e:
        problem = (f"is not a JSON file: it is not UTF-8 text ({e.reason} "
                   f"at byte {e.start}), so it is corrupt or a different "
                   "kind of file.")
    except json.JSONDecodeError as e:
        what = "is empty" if not e.doc.strip() else (
            f"is not valid JSON ({e.msg} at line {e.lineno}, column "
            f"{e.colno})")
        problem = (f"{what}: the file is corrupt, truncated or was edited "
                   "by hand.")
    raise JSONFileError(f"{path} {problem} {fix() if callable(fix) else fix}")


TF_CONFIG_FIX = (
    'Set it to a JSON object such as {"cluster": {"worker": ["host:port", '
    '...]}, "task": {"type": "worker", "index": 0}}, or unset it.')


def loads_json(text, source, fix):
    """JSON text that did not come from a file (an environment variable),
    parsed; `source` names where it came from in the error."""
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise JSONFileError(
            f"{source} is not valid JSON ({e.msg} at line {e.lineno}, column "
            f"{e.colno}). {fix}") from None


def copy_file(src, dest):
    def write(tmp):
        with open(src, "rb") as fin, open(tmp, "wb") as fout:
            while chunk := fin.read(1 << 20):
                fout.write(chunk)
    return atomic_write(dest, write)


def sha256_of(path):
    import hashlib
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            digest.update(chunk)
    return digest.hexdigest()


def swap_into_place(staging, dest):
    """Rename the finished folder `staging` to `dest`, replacing an old
    `dest` (moved aside first, deleted after)."""
    staging, dest = Path(staging), Path(dest)
    old = None
    if dest.exists():
        old = dest.with_name(
            f".{dest.name}.old-{os.getpid()}-{time.time_ns()}")
        os.replace(dest, old)
    try:
        os.replace(staging, dest)
    except OSError:
        if old is not None:
            os.replace(old, dest)
        raise
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)
