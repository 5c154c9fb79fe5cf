"""A one-line progress display for downloads and conversions.

On a terminal the line redraws in place (`\\r`); in a log (not a tty) it
prints at most a handful of lines (start, every quarter, done), so CI logs
stay readable. It writes to stderr, leaving stdout to the program.
Set `KZOO_QUIET=1` to silence it everywhere.
"""

import os
import sys
import time


def quiet():
    return os.environ.get("KZOO_QUIET", "").lower() in ("1", "true", "yes")


def _format_bytes(n):
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f}{unit}" if unit == "B" else f"{n:.1f}{unit}"
        n /= 1000.0
    return f"{n:.1f}GB"


class Progress:
    """`Progress(total, label, unit)`; call `advance(n)` then `done()`.

    `unit="bytes"` shows sizes and a rate; any other unit shows counts.
    `total=None` (unknown size) shows what has been done so far.
    """

    def __init__(self, total, label, unit="", verbose=True, stream=None):
        self.total = total
        self.label = label
        self.unit = unit
        self.count = 0
        self.verbose = verbose and not quiet()
        self.stream = stream or sys.stderr
        self.start = time.perf_counter()
        self.dynamic = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_draw = 0.0
        self._quarter = -1
        self._finished = False
        self._draw(force=True)

    def _amount(self, n):
        return _format_bytes(n) if self.unit == "bytes" else f"{n}"

    def _line(self, note=""):
        elapsed = max(time.perf_counter() - self.start, 1e-9)
        if self.total:
            width = 24
            filled = int(width * min(self.count / self.total, 1.0))
            bar = "[" + "=" * filled + "." * (width - filled) + "]"
            amount = f"{self._amount(self.count)}/{self._amount(self.total)}"
        else:
            bar, amount = "", self._amount(self.count)
        unit = "" if self.unit == "bytes" else f" {self.unit}"
        rate = (f" {_format_bytes(self.count / elapsed)}/s"
                if self.unit == "bytes" else "")
        note = f" {note}" if note else ""
        return (f"{self.label} {bar} {amount}{unit} {elapsed:.1f}s{rate}"
                f"{note}").replace("  ", " ")

    def _draw(self, force=False, note=""):
        if not self.verbose:
            return
        if self.dynamic:
            now = time.perf_counter()
            if force or now - self._last_draw > 0.1:
                self.stream.write("\r" + self._line(note) + "\033[K")
                self.stream.flush()
                self._last_draw = now
            return
        quarter = (int(4 * self.count / self.total) if self.total else 0)
        if force or quarter > self._quarter:
            self._quarter = quarter
            self.stream.write(self._line(note) + "\n")
            self.stream.flush()

    def advance(self, n=1, note=""):
        self.count += n
        if self.total is not None and self.count >= self.total:
            return  # done() draws the last line
        self._draw(note=note)

    def done(self, note=""):
        if self._finished:
            return
        self._finished = True
        if self.total is None:
            self.total = self.count
        if not self.verbose:
            return
        if self.dynamic:
            self.stream.write("\r" + self._line(note) + "\033[K\n")
        else:
            self.stream.write(self._line(note) + "\n")
        self.stream.flush()
