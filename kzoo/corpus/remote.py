"""`kzoo prepare-corpus` over URLs: inputs read from, and a corpus written
to, `s3://`, `gs://`, `hf://` (any fsspec URL; `kzoo/utils/storage.py`).

Inputs. A URL input (a file, a folder or a glob pattern) is copied into
`$KZOO_CACHE/storage/inputs/` (a folder per URL) before anything is
tokenized, and prepared from there like a local input: the readers, the
byte ranges a large file is cut into and the processes all want a local,
seekable file. A copy is kept and fetched again only when the object
changed (its size or its store's version tag), so a re-run that finds
the corpus up to date downloads nothing.

Output. Parts of a preparation share a folder by locks and renames,
which object stores lack; so a URL output is prepared into a local
folder (`$KZOO_CACHE/storage/prepare/`), then committed to the URL
(every file, then the commit marker; `commit_folder`) and the local copy
removed. Re-running with the same inputs and options reads the URL's
manifest and does nothing.
"""

import glob
import json
import shutil
from pathlib import Path

from kzoo.corpus.shards import MANIFEST, CorpusError
from kzoo.utils import storage


def cache_root():
    from kzoo.presets import cache_dir
    return cache_dir() / "storage"


def local_inputs(inputs):
    """`inputs` with each URL replaced by its local copy (a file, a
    folder, or a pattern's matched files); local paths as they are."""
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    found = []
    for item in inputs:
        if storage.is_url(item):
            found += _fetch_input(str(item))
        else:
            found.append(item)
    return found


def _fetch_input(url):
    """The local copies of what `url` names: `[file]`, `[folder]` (a
    remote folder copied whole, copies of files gone from it removed), or
    a pattern's matched files."""
    fs, path = storage.filesystem(url)
    scheme = storage.scheme(url)
    with storage.reporting(url, "read"):
        if glob.has_magic(path):
            matches = fs.glob(path)
            if not matches:
                raise CorpusError(
                    f"The pattern {url} matches no file. Check the pattern "
                    "(quote it so the shell leaves it to kzoo).")
            files = sorted(f for match in matches
                           for f in (fs.find(match) if fs.isdir(match)
                                     else [match]))
            return [str(_copy_if_changed(fs, remote, scheme))
                    for remote in files]
        if fs.isdir(path):
            files = fs.find(path)
            copies = {_copy_if_changed(fs, remote, scheme)
                      for remote in files}
            folder = _local_copy_path(scheme, path.rstrip("/"))
            for stale in [p for p in folder.rglob("*") if p.is_file()
                          and not p.name.startswith(".")
                          and p not in copies]:
                stale.unlink()
            return [str(folder)]
        if fs.isfile(path):
            return [str(_copy_if_changed(fs, path, scheme))]
        raise FileNotFoundError(path)


def _local_copy_path(scheme, path):
    return storage.cache_path(cache_root() / "inputs", f"{scheme}://{path}")


def _copy_if_changed(fs, remote, scheme):
    """The local copy of the object `remote`, downloaded unless the copy
    there is of the same version (`fs.ukey`: the store's ETag or
    generation, else its size and time), recorded beside it."""
    local = _local_copy_path(scheme, remote)
    version = str(fs.ukey(remote))
    tag = local.with_name(f".{local.name}.kzoo-version")
    if local.is_file() and tag.is_file() and \
            tag.read_text(encoding="utf-8") == version:
        return local
    folder, name = f"{scheme}://{remote}".rsplit("/", 1)
    storage.download_file(folder, name, local)
    tag.write_text(version, encoding="utf-8")
    return local


def staging_folder(url, part):
    """The local folder a URL output is prepared in, holding the URL's
    committed manifest when there is one (what says "up to date", or
    what another tokenizer is refused against). Checks first that the
    URL can be written (one line, before any work)."""
    if part is not None:
        raise CorpusError(
            f"--part with a URL output ({url}): the parts of a preparation "
            "meet in one shared folder, which an object store is not. "
            "Prepare the parts into a shared local or network folder, then "
            "run once without --part to write the URL, or prepare without "
            "--part.")
    storage.check_writable(url)
    local = storage.cache_path(cache_root() / "prepare", url)
    shutil.rmtree(local, ignore_errors=True)
    local.mkdir(parents=True)
    committed = storage.read_commit(url)
    if committed is not None and MANIFEST in committed["files"]:
        storage.download_file(url, MANIFEST, local / MANIFEST,
                              committed["files"][MANIFEST])
    return local


def publish(local, url):
    """Commit the corpus prepared in `local` to `url` (its manifest and
    every shard, then the marker), then free the local copy."""
    manifest = json.loads((local / MANIFEST).read_text(encoding="utf-8"))
    listed = {record["name"] for key in ("shards", "validation_shards")
              for record in manifest.get(key) or []}
    names = [name for name in storage.local_files(local)
             if not name.startswith("shards/")
             or name.split("/")[1] in listed]
    storage.commit_folder(local, url, names)
    shutil.rmtree(local, ignore_errors=True)
