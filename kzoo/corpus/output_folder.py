"""The corpus folder a preparation writes: its checks, file names,
locks, and the removal of what a preparation replaces.

Parts running at once share the folder: each part writes only its own
manifest (`manifest.part-I-of-N.json`) and shards (named after the part,
`shard_prefix`), under a lock of its own; the merge takes a lock of its
own too.
"""

import os
import shutil
from contextlib import contextmanager

from kzoo.corpus.shards import (FORMAT, FORMAT_VERSION, MANIFEST,
                                SHARDS_FOLDER, TOKENIZER_FOLDER, CorpusError)
from kzoo.corpus.tokenizer_hash import tokenizer_hash
from kzoo.utils.files import read_json, sha256_of, write_json

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs are not guarded
    fcntl = None

# A file that marks a folder as a kzoo corpus (before its manifest exists).
MARKER = ".kzoo-corpus"


def check_output(output):
    if output.exists() and not output.is_dir():
        raise CorpusError(f"{output} is a file; the corpus output is a "
                          "folder. Give a new or empty folder's path.")
    if output.is_dir() and not is_corpus_folder(output):
        names = sorted(p.name for p in output.iterdir())
        if names:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5
                                            else "")
            raise CorpusError(
                f"{output} holds other files ({shown}) and no kzoo corpus. "
                "Give a new or empty folder for the corpus; nothing was "
                "written.")
    try:
        (output / SHARDS_FOLDER).mkdir(parents=True, exist_ok=True)
        (output / MARKER).write_text(FORMAT + "\n")
        probe = output / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise CorpusError(
            f"Cannot write the corpus to {output} "
            f"({error.strerror or error}). Choose a folder you can write "
            "to.") from None


def is_corpus_folder(folder):
    if (folder / MARKER).is_file():
        return True
    for path in [folder / MANIFEST, *folder.glob("manifest.part-*.json")]:
        try:
            if read_json(path).get("format") == FORMAT:
                return True
        except (OSError, ValueError):
            pass
    return False


def read_existing(path):
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except ValueError:
        return None


def part_manifest_name(part):
    return f"manifest.part-{part[0]:04d}-of-{part[1]:04d}.json"


def shard_prefix(part):
    return f"part-{part[0]:04d}-of-{part[1]:04d}-"


def write_manifest_as(path, manifest):
    """A part manifest: the corpus format, written atomically."""
    write_json(path, dict(manifest, format=FORMAT,
                          format_version=FORMAT_VERSION))


def remove_file(path):
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def listed_shards(manifest):
    return {record["name"] for key in ("shards", "validation_shards")
            for record in manifest.get(key) or []}


def clean_shards(output, prefix, keep=()):
    """Remove the shard folders whose names start with `prefix` (and
    their unfinished `.NAME.partial-*` copies) but those in `keep`."""
    shards = output / SHARDS_FOLDER
    if not shards.is_dir():
        return
    for path in shards.iterdir():
        name = path.name
        bare = name[1:].split(".partial-")[0] if name.startswith(".") \
            else name
        if bare.startswith(prefix) and name not in keep:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                remove_file(path)


def save_tokenizer(tokenizer, record, output):
    """The tokenizer into OUTPUT/tokenizer, unless the one there has the
    same hash (parts running at once all find or write the same files)."""
    from kzoo.utils.files import swap_into_place
    folder = output / TOKENIZER_FOLDER
    if folder.is_dir():
        try:
            saved = type(tokenizer).from_preset(str(folder))
            if tokenizer_hash(saved) == record["sha256"]:
                return
        except Exception:  # noqa: BLE001 - damaged or foreign: replaced
            pass
    staging = output / f".{TOKENIZER_FOLDER}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    tokenizer.save_to_preset(staging)
    # A preset folder needs a metadata.json; its files' sha256 make
    # `from_preset` refuse a damaged copy.
    write_json(staging / "metadata.json", {
        "name": f"{output.name}-tokenizer",
        "description": "The tokenizer a kzoo corpus was prepared with "
                       "(kzoo prepare-corpus).",
        "tokenizer": {name: {"sha256": sha256_of(staging / name)}
                      for name in tokenizer.asset_files.values()}})
    swap_into_place(staging, folder)


@contextmanager
def locked(output, part):
    """One preparation per output (per part for part runs): a second one
    is refused at once, not left to mix its shards with the first's."""
    name = ".lock" if part is None else \
        f".lock.part-{part[0]:04d}-of-{part[1]:04d}"
    if fcntl is None:
        yield
        return
    with open(output / name, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CorpusError(
                f"Another kzoo prepare-corpus is writing {output}"
                f"{'' if part is None else f' (part {part[0]}/{part[1]})'}."
                " Wait for it to finish, or choose another output.") \
                from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def merge_lock(output):
    if fcntl is None:
        yield
        return
    with open(output / ".lock.merge", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
