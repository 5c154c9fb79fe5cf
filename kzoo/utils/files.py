"""Atomic file writes: a reader sees the old file or the new one, never half."""

import json
import os
import tempfile
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


def read_json(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


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
