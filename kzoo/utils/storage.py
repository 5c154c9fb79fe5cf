"""Folders that live behind a URL (`s3://`, `gs://`, `hf://`, `memory://`,
any fsspec scheme), written so that a reader sees all of one or nothing.

Object stores have no rename, so the local rule (write a hidden copy,
rename it into place) cannot hold there. Here a folder is *committed*:
every file is uploaded first, then one small object, `kzoo-commit.json`
(`COMMIT_MARKER`), listing them with their sizes. A folder without its
marker is absent or incomplete to every reader in kzoo: a reader that
finds no marker refuses (or, for checkpoints, looks at the one before);
replacing a folder removes its marker before anything else; a failed
upload leaves no marker and removes what it had put.

fsspec (and s3fs for `s3://`, gcsfs for `gs://`) are the `kzoo[cloud]`
extra: imported only when a URL is used, with a one-line error naming
the extra when they are missing. Local paths never come here.

What a URL's folder is cached as on this machine: `cache_path(root,
url)`, a folder under `root` named after the URL (scheme, bucket, key),
so that two URLs never share files.
"""

import json
import os
import re
import shutil
import time
import uuid
from contextlib import contextmanager
from pathlib import Path

COMMIT_MARKER = "kzoo-commit.json"
COMMIT_FORMAT = "kzoo-commit"
EXTRA = 'pip install "kzoo[cloud]"'
# The package fsspec needs for a scheme, named when it is missing.
SCHEME_PACKAGES = {"s3": "s3fs", "s3a": "s3fs", "gs": "gcsfs",
                   "gcs": "gcsfs", "hf": "huggingface_hub",
                   "az": "adlfs", "abfs": "adlfs"}
CREDENTIALS = {
    "s3": "set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (or "
          "AWS_PROFILE), and AWS_ENDPOINT_URL for a store other than AWS",
    "gs": "set GOOGLE_APPLICATION_CREDENTIALS to a service account's key "
          "file (or run `gcloud auth application-default login`)",
    "hf": "set HF_TOKEN (or run `hf auth login`)",
}
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


class StorageError(ValueError):
    """A URL that cannot be read or written: the message names it, what
    went wrong and what to do."""


def scheme(location):
    """`"s3"` for `s3://b/k`; None for a local path (and `file://`)."""
    if not isinstance(location, (str, os.PathLike)):
        return None
    match = _SCHEME.match(os.fspath(location))
    if not match or match.group(1).lower() == "file":
        return None
    return match.group(1).lower()


def is_url(location):
    """True for a remote (non-local) fsspec URL."""
    return scheme(location) is not None


def join(url, *names):
    return "/".join([str(url).rstrip("/"), *names])


def filesystem(url):
    """`(fsspec filesystem, path inside it)` for `url`."""
    name = scheme(url)
    try:
        import fsspec
    except ImportError:
        raise StorageError(
            f"{url}: reading and writing URLs needs fsspec, which is not "
            f"installed. Run `{EXTRA}"
            f"{' gcsfs' if name in ('gs', 'gcs') else ''}`.") from None
    try:
        return fsspec.core.url_to_fs(str(url))
    except ImportError as error:
        package = SCHEME_PACKAGES.get(name)
        if package is None:  # a scheme kzoo[cloud] does not cover
            raise StorageError(
                f"{url}: {name}:// needs a package that is not installed "
                f"({error}). Install it.") from None
        command = EXTRA if package == "s3fs" else f"{EXTRA} {package}"
        raise StorageError(
            f"{url}: {name}:// needs {package}, which is not installed. "
            f"Run `{command}`.") from None
    except ValueError as error:
        raise StorageError(
            f"{url}: {error}. Use s3://, gs://, hf:// or a local path."
        ) from None


def failure_message(url, doing, error):
    """One line for `error` raised while `doing` (e.g. "reading") `url`."""
    name = scheme(url)
    kind = type(error).__name__
    if "Credential" in kind or "credentials" in str(error).lower():
        fix = CREDENTIALS.get(name if name != "gcs" else "gs",
                              f"give the credentials {name}:// needs")
        return (f"Cannot {doing} {url}: no credentials for {name}:// were "
                f"found ({kind}). Before the run, {fix}.")
    if isinstance(error, PermissionError):
        return (f"Cannot {doing} {url}: access denied ({error}). Check that "
                "the credentials may read and write there.")
    if isinstance(error, FileNotFoundError):
        return (f"Cannot {doing} {url}: it does not exist ({error}). Check "
                "the URL (bucket and path).")
    return (f"Cannot {doing} {url} ({kind}: {error}). Check the URL, the "
            "network and the credentials.")


@contextmanager
def reporting(url, doing):
    """Turn what the filesystem raises into a one-line `StorageError`."""
    try:
        yield
    except StorageError:
        raise
    except Exception as error:  # noqa: BLE001 - botocore's, gcsfs' own kinds
        raise StorageError(failure_message(url, doing, error)) from None


def check_readable(url):
    """Refuse, before work starts, a URL that does not exist or cannot be
    read (no credentials, access denied)."""
    fs, path = filesystem(url)
    with reporting(url, "read"):
        if not fs.exists(path):
            raise FileNotFoundError(path)


def check_writable(url):
    """Refuse, before work starts, a URL that cannot be written: write a
    probe object next to where the folder goes and remove it."""
    fs, path = filesystem(url)
    probe = f"{path.rstrip('/')}/.kzoo-write-test-{uuid.uuid4().hex}"
    with reporting(url, "write to"):
        fs.pipe_file(probe, b"")
        fs.rm_file(probe)


def cache_path(root, url):
    """The local folder `url` is cached in under `root`: one folder per
    scheme, bucket and key, with characters a file name cannot hold
    replaced."""
    text = str(url).rstrip("/")
    name, rest = text.split("://", 1)
    parts = [re.sub(r"[^A-Za-z0-9._=+-]", "_", part) or "_"
             for part in rest.split("/") if part not in ("", ".", "..")]
    return Path(root).joinpath(name.lower(), *parts)


# --- committed folders ---------------------------------------------------
def read_commit(url):
    """The marker of the folder at `url` (a dict), or None when the folder
    is not committed (absent, or a write that never finished)."""
    fs, path = filesystem(url)
    with reporting(url, "read"):
        try:
            data = fs.cat_file(f"{path.rstrip('/')}/{COMMIT_MARKER}")
        except FileNotFoundError:
            return None
    try:
        marker = json.loads(data)
    except ValueError:
        return None
    return marker if marker.get("format") == COMMIT_FORMAT else None


def is_committed(url):
    return read_commit(url) is not None


def local_files(folder):
    """`{relative posix path: Path}` of a local folder's files, hidden
    ones (locks, unfinished `.partial` copies) left out."""
    folder = Path(folder)
    found = {}
    for path in sorted(folder.rglob("*")):
        relative = path.relative_to(folder)
        if path.is_file() and not any(part.startswith(".")
                                      for part in relative.parts):
            found[relative.as_posix()] = path
    return found


def remote_files(url):
    """The relative paths of every object under `url`."""
    fs, path = filesystem(url)
    root = path.rstrip("/")
    with reporting(url, "list"):
        # Listings are cached per process (s3fs, gcsfs): another machine
        # may have written since.
        fs.invalidate_cache(root)
        try:
            found = fs.find(root)
        except FileNotFoundError:
            return []
    return sorted(p[len(root) + 1:] for p in found
                  if p.startswith(root + "/"))


def uncommit(url):
    """Remove `url`'s marker: from here on its folder reads as absent."""
    fs, path = filesystem(url)
    with reporting(url, "write to"):
        try:
            fs.rm_file(f"{path.rstrip('/')}/{COMMIT_MARKER}")
        except FileNotFoundError:
            pass


def remove_folder(url):
    """Delete the folder at `url`: its marker first, then its files."""
    uncommit(url)
    fs, path = filesystem(url)
    with reporting(url, "delete"):
        try:
            fs.rm(path.rstrip("/"), recursive=True)
        except FileNotFoundError:
            pass


def commit_folder(local, url, names=None):
    """Upload the local folder `local` to `url` and commit it.

    Order: the old marker goes (readers see no folder), every file is
    put (`names`: the relative paths to upload, default every file that
    is not hidden), objects of an earlier version that are not among
    them are deleted, and the marker is written last. On any failure the
    files this call put are removed (what it can) and no marker is left.
    Returns the marker.
    """
    files = local_files(local)
    if names is not None:
        files = {name: files[name] for name in names}
    fs, path = filesystem(url)
    root = path.rstrip("/")
    uncommit(url)
    stale = set(remote_files(url)) - set(files)
    put = []
    try:
        with reporting(url, "write to"):
            remote = [f"{root}/{name}" for name in files]
            # One call: fsspec's async stores (s3fs, gcsfs) upload the
            # files concurrently.
            if files:
                fs.put([str(p) for p in files.values()], remote)
            put = remote
            for name in sorted(stale - {COMMIT_MARKER}):
                fs.rm_file(f"{root}/{name}")
            marker = {"format": COMMIT_FORMAT, "commit": uuid.uuid4().hex,
                      "time": time.time(),
                      "files": {name: p.stat().st_size
                                for name, p in files.items()}}
            fs.pipe_file(f"{root}/{COMMIT_MARKER}",
                         json.dumps(marker, indent=1).encode("utf-8"))
    except BaseException:
        for remote_path in put or [f"{root}/{name}" for name in files]:
            try:
                fs.rm_file(remote_path)
            except Exception:  # noqa: BLE001 - best effort; no marker
                pass
        raise
    return marker


def download_file(url, relative, local, size=None):
    """Copy `url`/`relative` to the local file `local` atomically (a
    hidden copy renamed into place); `size`, when given, is checked."""
    fs, path = filesystem(url)
    local = Path(local)
    local.parent.mkdir(parents=True, exist_ok=True)
    partial = local.with_name(f".{local.name}.partial-{os.getpid()}-"
                              f"{uuid.uuid4().hex[:8]}")
    source = f"{path.rstrip('/')}/{relative}"
    try:
        with reporting(join(url, relative), "read"):
            fs.get_file(source, str(partial))
        if size is not None and partial.stat().st_size != size:
            raise StorageError(
                f"{join(url, relative)} holds {partial.stat().st_size} "
                f"bytes, not the {size} its folder's {COMMIT_MARKER} "
                "lists: it was changed after it was written. Write the "
                "folder again.")
        os.replace(partial, local)
    finally:
        if partial.exists():
            partial.unlink()
    return local


def download_committed(url, local, what="folder"):
    """Copy the committed folder at `url` into the local folder `local`
    (replacing it whole: files are fetched into a hidden copy that is
    renamed into place). Refuses a folder with no marker."""
    from kzoo.utils.files import swap_into_place
    marker = read_commit(url)
    if marker is None:
        raise StorageError(
            f"{url} holds no committed {what} (no {COMMIT_MARKER}): it was "
            "never written, or its writing was interrupted. Check the URL, "
            "or write it again.")
    local = Path(local)
    local.parent.mkdir(parents=True, exist_ok=True)
    staging = local.with_name(f".{local.name}.partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        for name, size in marker["files"].items():
            download_file(url, name, staging / name, size)
        staging.mkdir(parents=True, exist_ok=True)
        swap_into_place(staging, local)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return local


class CachedFolder:
    """A committed folder at `url`, read through a local cache: each file
    is downloaded when first asked for (`fetch`), into a cache folder
    named after the URL and the commit, so that a folder written again at
    the same URL is never read from the old one's files."""

    def __init__(self, url, cache_root, what="folder", fix=""):
        self.url = str(url).rstrip("/")
        self.marker = read_commit(self.url)
        if self.marker is None:
            raise StorageError(
                f"{self.url} holds no committed {what} (no {COMMIT_MARKER}):"
                " it was never written there, or its writing was "
                f"interrupted. {fix or 'Check the URL, or write it again.'}")
        self.local = cache_path(cache_root, self.url) / self.marker["commit"]

    def fetch(self, *names):
        """The local paths of `names` (relative paths in the folder),
        downloaded first where missing."""
        paths = []
        for name in names:
            local = self.local / name
            size = self.marker["files"].get(name)
            if size is None:
                raise StorageError(
                    f"{join(self.url, name)} is not in the folder's "
                    f"{COMMIT_MARKER}: the folder is not what kzoo wrote. "
                    "Write it again.")
            if not local.is_file() or local.stat().st_size != size:
                download_file(self.url, name, local, size)
            paths.append(local)
        return paths

    def fetch_under(self, prefix):
        """Every file under `prefix/`, fetched; returns its local folder."""
        self.fetch(*[name for name in self.marker["files"]
                     if name.startswith(prefix.rstrip("/") + "/")])
        return self.local / prefix
