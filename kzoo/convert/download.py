"""Downloading one file: streamed, verified, atomic, retried.

Only the standard library (urllib) is used. A file is streamed into a
temporary name beside its destination, checked (length, then sha256), and
renamed into place only when every check passes; on any failure the
temporary file is deleted, so a partial or corrupt download never lands.
Connection failures (refused, reset, cut mid-file, timeouts, 5xx) are
retried from the start; a wrong hash or a 4xx is not.

Environment:
    KZOO_DOWNLOAD_RETRIES   extra attempts after a connection failure (2)
    KZOO_DOWNLOAD_TIMEOUT   seconds without data before giving up (60)
"""

import hashlib
import http.client
import os
import re
import socket
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from kzoo.convert.errors import DownloadError
from kzoo.convert.progress import Progress

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class RemoteFileMissing(DownloadError):
    """The server answered 404 for this file."""


class _ConnectionProblem(Exception):
    """A failure worth retrying."""


class _RecordingRedirects(urllib.request.HTTPRedirectHandler):
    """Keeps the headers of redirect responses: the Hugging Face hub sends
    `X-Linked-Etag` (the sha256 of a large file) on the redirect to its
    CDN, not on the final response."""

    def __init__(self):
        super().__init__()
        self.headers = []

    def redirect_request(self, req, fp, code, msg, headers, newurl):
        self.headers.append(headers)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


def _sha_from_headers(all_headers):
    for headers in all_headers:
        for key in ("X-Linked-Etag", "ETag"):
            value = headers.get(key)
            if not value:
                continue
            value = value.strip()
            if value.startswith("W/"):
                value = value[2:]
            value = value.strip('"').lower()
            if _SHA256.match(value):
                return value
    return None


def _env_int(name, default):
    try:
        return int(os.environ.get(name, default))
    except ValueError:
        return default


def download_file(url, dest, sha256=None, size=None, verbose=True,
                  label=None, retries=None, timeout=None, user_agent="kzoo"):
    """Fetch `url` into `dest`; return a dict describing what was checked.

    Args:
        url: an http(s) URL.
        dest: the final path; it appears only after every check passed.
        sha256: the expected sha256 (hex). When None, a sha256 the server
            states (Hugging Face `X-Linked-Etag`) is checked instead.
        size: the expected size in bytes, when known.
        verbose: draw a progress bar.

    Raises:
        RemoteFileMissing: the server has no such file (404).
        DownloadError: anything else (after retries, for connection
            failures); nothing is left at `dest`.
    """
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    retries = _env_int("KZOO_DOWNLOAD_RETRIES", 2) if retries is None else retries
    timeout = _env_int("KZOO_DOWNLOAD_TIMEOUT", 60) if timeout is None else timeout
    label = label or f"Downloading {dest.name}"
    last_problem = None
    for attempt in range(retries + 1):
        if attempt:
            time.sleep(min(0.5 * attempt, 5.0))
        try:
            return _attempt(url, dest, sha256, size, verbose, label, timeout,
                            user_agent)
        except _ConnectionProblem as e:
            last_problem = e
    raise DownloadError(
        f"Could not download {url} after {retries + 1} attempt(s): "
        f"{last_problem}")


def _attempt(url, dest, sha256, size, verbose, label, timeout, user_agent):
    redirects = _RecordingRedirects()
    opener = urllib.request.build_opener(redirects)
    request = urllib.request.Request(url, headers={"User-Agent": user_agent})
    fd, tmp = tempfile.mkstemp(dir=dest.parent,
                               prefix=f".{dest.name}.partial-")
    try:
        digest = hashlib.sha256()
        received = 0
        try:
            with os.fdopen(fd, "wb") as out, \
                    opener.open(request, timeout=timeout) as response:
                length = response.headers.get("Content-Length")
                length = int(length) if length and length.isdigit() else None
                headers = redirects.headers + [response.headers]
                commit = next((h.get("X-Repo-Commit") for h in headers
                               if h.get("X-Repo-Commit")), None)
                progress = Progress(length or size, label, unit="bytes",
                                    verbose=verbose)
                while True:
                    chunk = response.read(1 << 20)
                    if not chunk:
                        break
                    out.write(chunk)
                    digest.update(chunk)
                    received += len(chunk)
                    progress.advance(len(chunk))
                if length is not None and received != length:
                    raise _ConnectionProblem(
                        f"the connection closed after {received} of "
                        f"{length} bytes")
                progress.done()
        except urllib.error.HTTPError as e:
            if e.code == 404:
                raise RemoteFileMissing(f"{url}: 404 not found") from None
            if e.code >= 500 or e.code == 429:
                raise _ConnectionProblem(f"HTTP {e.code} {e.reason}") from None
            raise DownloadError(
                f"{url}: HTTP {e.code} {e.reason} (a private or gated "
                "repository, or a wrong name?)") from None
        except (urllib.error.URLError, http.client.HTTPException,
                ConnectionError, socket.timeout, TimeoutError) as e:
            reason = getattr(e, "reason", None) or e
            if isinstance(reason, socket.gaierror):
                # No name resolution (no network, or a wrong endpoint):
                # retrying would only delay the error.
                raise DownloadError(
                    f"{url}: cannot resolve the host ({reason})") from None
            raise _ConnectionProblem(f"{type(e).__name__}: {reason}") from None

        if size is not None and received != size:
            raise DownloadError(
                f"{url}: got {received} bytes, the preset declares {size}; "
                "nothing was saved.")
        actual = digest.hexdigest()
        stated = _sha_from_headers(headers)
        expected = sha256 or stated
        if expected and actual != expected.lower():
            whose = "declared" if sha256 else "stated by the server"
            raise DownloadError(
                f"{url}: sha256 mismatch: got {actual}, expected {expected} "
                f"({whose}); nothing was saved.")
        os.replace(tmp, dest)
        return {"file": dest.name, "bytes": received, "sha256": actual,
                "verified": ("sha256 (declared)" if sha256 else
                             "sha256 (server)" if stated else
                             "length only"),
                "commit": commit}
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
