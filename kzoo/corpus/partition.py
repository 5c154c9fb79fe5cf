"""The sorted input files cut into pieces of work: parts (`--part i/n`,
one machine each) and, inside a part, units (one process each).

A piece is a byte range of one file, `{"file", "path", "start", "end"}`
(`file`: its index in the sorted input list). A plain `.txt` or `.jsonl`
file larger than a part or a unit is cut into several pieces, so one
100 GB `.jsonl` keeps every process of every machine busy; a `.gz` file
(no random access) and a `documents="files"` book (one document) stay
whole. Cuts fall where a document begins, so no document is split:

- `.jsonl`: at the first line that begins at or after the target byte;
- `.txt` (blank lines between documents): just after the first blank
  line that begins at or after it.

A cut is a function of the file's bytes and the target alone, so the two
pieces either side of it (read by different processes or machines, or
by the same one) agree on it, and a file's pieces tile it exactly. Part
`i` of `n` takes the pieces that begin in the `i`-th `n`-th of all input
bytes (sorted-file order, as if the files were one), so parts are
disjoint and complete whatever the files' sizes; `merge.py` checks it.
"""

import bisect
from pathlib import Path

from kzoo.corpus.sources import _kind


def splittable(record, documents):
    """Whether a file can be cut into pieces: plain (not `.gz`) text
    whose documents are lines (`.jsonl`) or blank-line separated
    (`.txt`, `documents="blank-lines"`)."""
    path = Path(record["path"])
    if path.name.lower().endswith(".gz"):
        return False
    kind = _kind(path)
    return kind == ".jsonl" or (kind == ".txt" and documents == "blank-lines")


def document_start(path, offset, blank_lines):
    """The first place at or after byte `offset` of `path` where a
    document begins (the file's size if none): the next line start, or
    for blank-line documents the end of the next blank line."""
    if offset <= 0:
        return 0
    with open(path, "rb") as file:
        file.seek(offset - 1)
        file.readline()  # the rest of the line that holds byte offset - 1
        if not blank_lines:
            return file.tell()
        for line in file:
            if not line.decode("utf-8", "replace").strip():
                return file.tell()
        return file.tell()


def file_pieces(index, record, targets, documents):
    """Pieces of file `index` cut at the document starts nearest after
    `targets` (byte offsets inside it); the empty ones dropped (an empty
    file is one empty piece, so that it is still reported)."""
    size = record["bytes"]
    cuts = [0]
    if splittable(record, documents):
        blank_lines = not str(record["path"]).lower().endswith(".jsonl")
        cuts += [document_start(record["path"], target, blank_lines)
                 for target in targets if 0 < target < size]
    cuts.append(size)
    pieces = [{"file": index, "path": str(record["path"]), "start": a,
               "end": b} for a, b in zip(cuts, cuts[1:]) if a < b]
    return pieces or [{"file": index, "path": str(record["path"]),
                       "start": 0, "end": size}]


def byte_range(piece, records):
    """`(start, end)` to read of a piece, or None for a whole file (read
    as its kind is read: a `.gz`, a table or a dataset folder have no
    byte ranges)."""
    size = records[piece["file"]]["bytes"]
    if piece["start"] == 0 and piece["end"] == size:
        return None
    return piece["start"], piece["end"]


def split_parts(records, count, documents):
    """The sorted files' pieces for each of `count` parts: part `i` holds
    the pieces that begin in the `i`-th `count`-th of all input bytes.
    Depends only on the files (and `documents`)."""
    total = sum(record["bytes"] for record in records)
    # Where parts 1 ... count - 1 begin, in bytes of all the input.
    bounds = [k * total // count for k in range(1, count)]
    parts = [[] for _ in range(count)]
    offset = 0
    for index, record in enumerate(records):
        targets = [bound - offset for bound in bounds]
        for piece in file_pieces(index, record, targets, documents):
            parts[bisect.bisect_right(bounds, offset + piece["start"])
                  ].append(piece)
        offset += record["bytes"]
    return parts


def all_pieces(records):
    """Every file whole: the pieces of a run that is not split in parts."""
    return [{"file": index, "path": str(record["path"]), "start": 0,
             "end": record["bytes"]} for index, record in enumerate(records)]


def group_units(pieces, unit_bytes, records, documents):
    """A part's pieces cut to at most about `unit_bytes` each (where a
    file can be cut) and grouped into units of work of at least
    `unit_bytes` of input (the last may hold less). Depends only on the
    files, the pieces and `unit_bytes`, never on how many processes run
    them."""
    cut = []
    for piece in pieces:
        start, end = piece["start"], piece["end"]
        if end - start <= unit_bytes:
            cut.append(piece)
            continue
        # The file's cuts near every unit_bytes past the piece's start,
        # kept inside the piece (whose own ends are document starts).
        targets = list(range(start + unit_bytes, end, unit_bytes))
        for sub in file_pieces(piece["file"], records[piece["file"]],
                               targets, documents):
            first, last = max(sub["start"], start), min(sub["end"], end)
            if first < last:
                cut.append(dict(sub, start=first, end=last))
    units, unit, size = [], [], 0
    for piece in cut:
        unit.append(piece)
        size += piece["end"] - piece["start"]
        if size >= unit_bytes:
            units.append(unit)
            unit, size = [], 0
    if unit:
        units.append(unit)
    return units


def piece_bytes(pieces):
    return sum(piece["end"] - piece["start"] for piece in pieces)
