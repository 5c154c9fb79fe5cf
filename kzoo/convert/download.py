"""Files from the Hugging Face hub, fetched through `huggingface_hub`.

`huggingface_hub` does the transfer and keeps the files in its own cache
(`HF_HUB_CACHE`, default `~/.cache/huggingface/hub`, shared with
`transformers`): its HEAD request for a file's metadata (`X-Repo-Commit`,
`ETag`/`X-Linked-Etag`, `X-Linked-Size`, the redirect to the CDN), a
dropped connection resumed with a `Range` request, a file lock per file so
that concurrent processes download it once, tokens for gated and private
repositories (`HF_TOKEN`, or `hf auth login`). kzoo adds, per repository:

- the revision is resolved to a commit on the first file, and every other
  file is fetched at that commit, so a branch that moves mid-download
  cannot mix two versions; `HubRepo.provenance()` records the commit;
- each file is checked against the sha256 the preset declares, or else
  the one recorded when it was first downloaded (a re-download: the
  `recorded` files of `HubRepo`), or else the sha256 the hub states for
  it (a large file's `X-Linked-Etag`); `provenance()` records every
  file's sha256, for the next re-download;
  a file that fails is evicted from huggingface_hub's cache, so the next
  attempt downloads it again instead of trusting it;
- the endpoint and offline switches are read at call time (huggingface_hub
  reads its own at import): `KZOO_HF_ENDPOINT` or `HF_ENDPOINT`;
  `KZOO_OFFLINE` or `HF_HUB_OFFLINE`. Offline, files come from
  huggingface_hub's cache or not at all; a hub that cannot be reached
  falls back to the same cache;
- kzoo's one-line progress display instead of tqdm bars.

Environment:
    KZOO_HF_ENDPOINT / HF_ENDPOINT   the hub (default https://huggingface.co)
    KZOO_OFFLINE=1 / HF_HUB_OFFLINE=1   never connect
    HF_HUB_CACHE / HF_HOME           where huggingface_hub keeps the files
    HF_TOKEN                         a token, for gated or private repos
    HF_HUB_DOWNLOAD_TIMEOUT, HF_HUB_ETAG_TIMEOUT   huggingface_hub's timeouts
"""

import os
import re
from pathlib import Path

from kzoo.convert.errors import DownloadError
from kzoo.convert.progress import Progress
from kzoo.utils.files import sha256_of
# The hub settings live where `kzoo env` reads them without kzoo.convert.
from kzoo.utils.hub_settings import (  # noqa: F401 - kzoo.convert.hub
    DEFAULT_ENDPOINT, endpoint, hub_cache_dir, offline, offline_switch)
from kzoo.version import __version__

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_COMMIT = re.compile(r"^[0-9a-f]{40}$")
# Exceptions from the HTTP stack under huggingface_hub (httpx in 1.x,
# httpx2 later): recognised by module, so that kzoo does not import an
# HTTP library that huggingface_hub may swap.
_NETWORK_MODULES = ("httpx", "httpx2", "httpcore", "h11", "requests",
                    "urllib3")


class FileUnavailable(DownloadError):
    """A file that cannot be had: absent from the repository, or (offline)
    absent from huggingface_hub's cache."""


class RemoteFileMissing(FileUnavailable):
    """The repository has no such file at this commit."""


class NotCached(FileUnavailable):
    """Offline (or the hub unreachable), and the file is not in
    huggingface_hub's cache."""


def _is_network_error(error):
    module = type(error).__module__.split(".")[0]
    return module in _NETWORK_MODULES or isinstance(
        error, (ConnectionError, TimeoutError))


class _Nowhere:
    """A file for tqdm to draw into that keeps nothing."""

    def write(self, text):
        pass

    def flush(self):
        pass


def progress_bar_class(label, verbose=True):
    """The tqdm class huggingface_hub draws a file's bar with: its own
    tqdm (so plain and Xet downloads find every method they call), drawing
    kzoo's one progress line (stderr; quiet with KZOO_QUIET=1) instead."""
    from huggingface_hub.utils import tqdm as hf_tqdm

    class KzooProgressBar(hf_tqdm):
        def __init__(self, *args, **kwargs):
            self._line = None
            kwargs.update(file=_Nowhere(), desc=label,
                          disable=bool(kwargs.get("disable")) or not verbose)
            super().__init__(*args, **kwargs)
            if not self.disable:
                self._line = Progress(self.total, label, unit="bytes")
                self._sync()

        def _sync(self):
            line = self._line
            if line is not None:
                line.total = self.total
                if self.n != line.count:
                    # n < count when a server ignored a Range request and
                    # the download started over.
                    line.advance(self.n - line.count)

        def display(self, msg=None, pos=None):
            self._sync()
            return True

        def close(self):
            if self._line is not None and not self.disable:
                self._sync()
                self._line.done()
            super().close()

    return KzooProgressBar


class HubRepo:
    """One repository, pinned to one commit, fetched file by file.

    Example:
    ```python
    repo = HubRepo("google-bert/bert-base-uncased")
    config = repo.fetch("config.json")            # resolves main -> commit
    weights = repo.fetch("model.safetensors", sha256="...")
    repo.provenance()   # {"huggingface": ..., "commit": ..., "files": [...]}
    ```

    `fetch` returns the file's path in huggingface_hub's cache (read it,
    do not write it), or raises `DownloadError` (a `FileUnavailable` when
    the file does not exist, or is not cached while offline).
    """

    def __init__(self, repo, revision="main", verbose=True, recorded=None):
        """`recorded`: {file name: sha256} of an earlier download, which
        every file fetched again must match (a re-download)."""
        self.repo = repo
        self.recorded = dict(recorded or {})
        self.revision = revision or "main"
        self.verbose = verbose
        self.commit = self.revision if _COMMIT.match(self.revision) else None
        self.endpoint = endpoint()
        self.offline = offline_switch()
        self.cache = hub_cache_dir()
        # Why files come from the cache only: offline, or the first
        # network failure (then every later file skips the network too).
        self.unreachable = None
        self.records = []

    def __repr__(self):
        return f"HubRepo({self.repo!r}, {self.revision!r})"

    @property
    def url(self):
        return f"{self.endpoint}/{self.repo}"

    def provenance(self):
        return {"huggingface": self.repo, "revision": self.revision,
                "commit": self.commit, "url": self.url,
                "files": list(self.records)}

    def fetch(self, filename, sha256=None, size=None, required=True):
        """The verified local path of `filename`; None for a missing file
        when not `required`."""
        try:
            path, stated = self._fetch(filename)
        except FileUnavailable:
            if required:
                raise
            return None
        whose = "declared by the preset"
        if sha256 is None and filename in self.recorded:
            sha256 = self.recorded[filename]
            whose = ("recorded when it was first downloaded; the hub now "
                     "serves another file at that commit")
        self.records.append(self._verify(Path(path), filename, sha256, size,
                                         stated, whose))
        return Path(path)

    # ------------------------------------------------------------------
    def _common(self):
        return dict(endpoint=self.endpoint, library_name="kzoo",
                    library_version=__version__)

    def _fetch(self, filename):
        if self.offline or self.unreachable:
            return self._from_cache(filename), None
        import huggingface_hub as hf
        url = hf.hf_hub_url(self.repo, filename,
                            revision=self.commit or self.revision,
                            endpoint=self.endpoint)
        try:
            metadata = hf.get_hf_file_metadata(url, **self._common())
        except Exception as e:
            if not self._unreachable(e, filename):
                raise
            # The hub cannot be reached: what huggingface_hub has cached
            # for this revision is as good (and is verified below).
            self.unreachable = f"{type(e).__name__}: {_first_line(e)}"
            return self._from_cache(filename), None
        if not metadata.commit_hash:
            raise DownloadError(
                f"{url} answered without an X-Repo-Commit header: "
                f"{self.endpoint} does not look like a Hugging Face hub "
                "(check KZOO_HF_ENDPOINT / HF_ENDPOINT).")
        # The first file is fetched at the branch (or tag), so that
        # huggingface_hub's cache records branch -> commit (what offline
        # use resolves a branch with); the commit it was fetched at pins
        # every later file.
        first = self.commit is None
        try:
            path = hf.hf_hub_download(
                self.repo, filename,
                revision=self.revision if first else self.commit,
                cache_dir=self.cache,
                tqdm_class=progress_bar_class(
                    f"Downloading {self.repo}/{filename}", self.verbose),
                **self._common())
            if first:
                self.commit = hf.hf_hub_download(
                    self.repo, filename, revision=self.revision,
                    cache_dir=self.cache, local_files_only=True,
                    dry_run=True, **self._common()).commit_hash
        except Exception as e:
            if self._unreachable(e, filename) or isinstance(e, OSError):
                # A connection lost for good, a size that does not match,
                # a full disk: huggingface_hub kept nothing of the file.
                raise DownloadError(
                    f"{self.url} ({filename}): {type(e).__name__}: "
                    f"{_first_line(e)}") from None
            raise
        etag = (metadata.etag or "").lower()
        if metadata.commit_hash != self.commit:
            etag = ""  # the branch moved between the two requests
        return path, etag if _SHA256.match(etag) else None

    def _from_cache(self, filename):
        import huggingface_hub as hf
        from huggingface_hub import errors
        revision = self.commit or self.revision
        try:
            if self.commit is None:
                info = hf.hf_hub_download(
                    self.repo, filename, revision=revision,
                    cache_dir=self.cache, local_files_only=True,
                    dry_run=True, **self._common())
                self.commit = info.commit_hash
            return hf.hf_hub_download(
                self.repo, filename, revision=self.commit,
                cache_dir=self.cache, local_files_only=True,
                **self._common())
        except (errors.EntryNotFoundError, FileNotFoundError):
            why = (f"{self.offline} is set" if self.offline else
                   f"{self.endpoint} could not be reached "
                   f"({self.unreachable})")
            raise NotCached(
                f"{self.repo}/{filename}@{revision} is not in "
                f"huggingface_hub's cache ({self.cache}) and {why}") from None

    def _unreachable(self, error, filename):
        """True for a failure to reach the hub (which huggingface_hub's
        cache may make up for); kzoo's `DownloadError` raised for an answer
        that settles it (no such file, revision or repository; a gated
        repository; an HTTP error); False for anything else."""
        from huggingface_hub import errors
        where = f"{self.url}@{self.commit or self.revision}"
        if isinstance(error, (errors.OfflineModeIsEnabled,
                              errors.LocalEntryNotFoundError)):
            return True  # huggingface_hub could not reach the hub either
        if _is_network_error(error) and not isinstance(
                error, errors.HfHubHTTPError):
            return True
        if isinstance(error, errors.EntryNotFoundError):
            raise RemoteFileMissing(f"{where} has no file {filename}.") \
                from None
        if isinstance(error, errors.RevisionNotFoundError):
            raise DownloadError(
                f"{self.url} has no revision {self.revision!r} (a branch, "
                "tag or commit sha).") from None
        if isinstance(error, errors.GatedRepoError):
            raise DownloadError(
                f"{self.url} is gated: accept its conditions on the hub, "
                "then give kzoo a token (set HF_TOKEN, or run `hf auth "
                "login`).") from None
        if isinstance(error, errors.RepositoryNotFoundError):
            raise DownloadError(
                f"{self.url} was not found: a wrong name, or a private "
                "repository (set HF_TOKEN to a token that can read it)."
            ) from None
        if isinstance(error, errors.HfHubHTTPError):
            status = getattr(getattr(error, "response", None),
                             "status_code", None)
            if status is not None and (status >= 500 or status == 429):
                return True  # the hub is down or busy: as if unreachable
            hint = (" (a private or gated repository? set HF_TOKEN)"
                    if status in (401, 403) else "")
            raise DownloadError(
                f"{where} ({filename}): HTTP {status}{hint}: "
                f"{_first_line(error)}") from None
        return False

    def _verify(self, path, filename, sha256, size, stated,
                whose="declared by the preset"):
        label = f"{self.repo}/{filename}"
        got_size = path.stat().st_size
        if size is not None and got_size != size:
            _evict(path)
            raise DownloadError(
                f"{label}: got {got_size} bytes, the preset declares "
                f"{size}; removed it from huggingface_hub's cache, nothing "
                "was converted.")
        actual = sha256_of(path)
        expected = (sha256 or stated or "").lower()
        if expected and actual != expected:
            _evict(path)
            whose = whose if sha256 else "stated by the hub"
            raise DownloadError(
                f"{label}: sha256 mismatch: got {actual}, expected "
                f"{expected} ({whose}); removed it from huggingface_hub's "
                "cache, nothing was converted.")
        verified = ("sha256 (recorded)" if sha256 and whose.startswith(
            "recorded") else "sha256 (declared)" if sha256 else
                    "sha256 (server)" if stated else
                    "length only" if not (self.offline or self.unreachable)
                    else "cached (not re-verified)")
        return {"file": filename, "bytes": got_size, "sha256": actual,
                "verified": verified}


def _evict(path):
    """Remove a file that failed verification from huggingface_hub's
    cache: the snapshot entry and the blob it links to (one level only,
    never a shared store behind the blob)."""
    path = Path(path)
    targets = [path]
    if path.is_symlink():
        targets.append(path.parent / os.readlink(path))
    for target in targets:
        try:
            target.unlink()
        except FileNotFoundError:
            pass


def _first_line(error):
    text = str(error).strip()
    return text.splitlines()[0] if text else type(error).__name__
