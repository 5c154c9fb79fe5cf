"""The text a corpus is prepared from: which files, and their documents.

Inputs are files, folders (searched recursively) or glob patterns, of
`.txt` and `.jsonl` files and their `.gz` forms. Files are read line by
line, never whole: a 2 GB file costs one line (and one document) of
memory. Tables are inputs too: `.parquet` files, and folders holding a
Hugging Face dataset (saved with `save_to_disk`, or a dataset
repository), a row a document (`kzoo/corpus/readers.py`).

Documents:
- `.txt`, `documents="blank-lines"` (the default): blank lines separate
  documents, the input convention of BERT's `create_pretraining_data.py`
  (one sentence or paragraph per line, a blank line between documents).
- `.txt`, `documents="files"`: each file is one document (a book). Its
  lines are held until the file ends: a document must fit in memory.
- `.jsonl`: each line is one JSON object, a document, whose text is in
  `text_field` (`"text"` by default); blank lines are skipped.

A document is yielded as its text: its lines joined with `"\n"` as they
were (indentation kept; a `documents="files"` document keeps its blank
lines, which separate its paragraphs). `document_sentences` cuts it into
the pieces a corpus stores, by the `text` option:

- `"lines"`: each non-blank line is one sentence, as BERT's
  `create_pretraining_data.py` reads its input ("one sentence per line";
  the default for `.txt` with `documents="blank-lines"`);
- `"paragraphs"`: the document is running text, hard-wrapped or not
  (its lines joined; a blank line inside it, as between a book's
  paragraphs, ends a paragraph), split into sentences by
  `kzoo.preprocessing.split_sentences` (the default for books,
  `documents="files"`, and for `.jsonl`);
- `"raw"`: the document whole, one piece, every newline and indent kept
  (code and poetry for a causal LM: GPT-2 reads them as the text has
  them).
"""

import glob
import gzip
import json
import re
import zlib
from pathlib import Path

from kzoo.corpus.readers import (PARQUET, TABLE_KINDS, document_text,
                                 folder_kind, folder_record, table_documents)
from kzoo.corpus.shards import CorpusError

SUFFIXES = (".txt", ".jsonl", ".txt.gz", ".jsonl.gz", PARQUET)
DOCUMENT_MODES = ("blank-lines", "files")
TEXT_MODES = ("auto", "lines", "paragraphs", "raw")
# Bytes read before a file's first document is checked for binary data.
_SNIFF_BYTES = 8192


def _kind(path):
    """".txt", ".jsonl" (looking through a `.gz` ending), ".parquet", a
    dataset folder's kind (`kzoo/corpus/readers.py`) or None."""
    if path.is_dir():
        return folder_kind(path)
    name = path.name.lower()
    if name.endswith(PARQUET):
        return PARQUET
    if name.endswith(".gz"):
        name = name[:-3]
    for suffix in (".txt", ".jsonl"):
        if name.endswith(suffix):
            return suffix
    return None


def find_sources(inputs):
    """The input files, sorted by path (as strings): each input is a
    file, a folder (every matching file under it) or a glob pattern.

    Raises `CorpusError` for a missing path, a pattern or folder that
    matches no `.txt`/`.jsonl` file, or a file of another kind.
    """
    if isinstance(inputs, (str, Path)):
        inputs = [inputs]
    inputs = list(inputs)
    if not inputs:
        raise CorpusError("No inputs: give .txt/.jsonl files, folders or "
                          "glob patterns to prepare.")
    found = set()
    for item in inputs:
        path = Path(item)
        if path.is_dir() and folder_kind(path):
            found.add(path)  # a dataset, read whole (readers.py)
        elif path.is_dir():
            matches = [p for p in path.rglob("*")
                       if p.is_file() and _kind(p)]
            if not matches:
                raise CorpusError(
                    f"{path} holds no {', '.join(SUFFIXES)} files. Point to "
                    "the folder that holds the text, or name the files.")
            found.update(matches)
        elif path.is_file():
            if not _kind(path):
                raise CorpusError(
                    f"{path} is not a .txt or .jsonl file (nor their .gz "
                    "forms), nor .parquet. Rename it if it is text, or leave "
                    "it out.")
            found.add(path)
        elif glob.has_magic(str(item)):
            matches = [Path(p) for p in glob.glob(str(item), recursive=True)]
            files = [p for p in matches if _kind(p)]
            for folder in (p for p in matches
                           if p.is_dir() and not folder_kind(p)):
                files += [p for p in folder.rglob("*")
                          if p.is_file() and _kind(p)]
            if not files:
                raise CorpusError(
                    f"The pattern {item} matches no {', '.join(SUFFIXES)} "
                    "file. Check the pattern (quote it so the shell leaves "
                    "it to kzoo).")
            found.update(files)
        else:
            raise CorpusError(
                f"{path} does not exist. Check the path (a file, a folder "
                "or a glob pattern).")
    return sorted((p.resolve() for p in found), key=str)


def source_record(path):
    """`{"path", "bytes", "mtime_ns"}`: what says a file is unchanged."""
    if Path(path).is_dir():
        return folder_record(path)  # a dataset folder
    stat = Path(path).stat()
    return {"path": str(path), "bytes": stat.st_size,
            "mtime_ns": stat.st_mtime_ns}


class SourceReader:
    """One input file's documents, read line by line.

    `documents()` yields each document's text (its lines joined with
    spaces); `bytes_read` is how far into the file (compressed bytes for a
    `.gz`) reading has come, for a progress bar.

    `start`, `end`: read only the lines that begin in bytes `[start,
    end)` of an uncompressed file (a piece of one large file,
    `kzoo/corpus/partition.py`: its cuts fall where documents begin).
    """

    def __init__(self, path, documents="blank-lines", text_field="text",
                 start=0, end=None):
        self.path = Path(path)
        self.mode = documents
        self.text_field = text_field
        self.kind = _kind(self.path)
        self.gzipped = self.path.name.lower().endswith(".gz")
        if self.gzipped and (start or end is not None):
            raise ValueError(f"{self.path}: a .gz file is read whole; it "
                             "cannot be read from a byte range.")
        self.start = start
        self.end = end
        self._raw = None

    @property
    def bytes_read(self):
        if self._raw is None or self._raw.closed:
            return 0
        return self._raw.tell() - self.start

    def _line(self, number):
        """A line, named for an error: its number in the file, or in the
        piece read when that starts past the first byte."""
        if not self.start:
            return f"line {number}"
        return f"line {number} after byte {self.start:,}"

    def _where(self, number):
        return f"{self.path}, {self._line(number)}"

    def documents(self):
        if self.kind in TABLE_KINDS:  # a row a document (readers.py)
            yield from table_documents(self.path, self.kind, self.text_field)
            return
        try:
            with open(self.path, "rb") as raw:
                self._raw = raw
                raw.seek(self.start)
                stream = gzip.GzipFile(fileobj=raw, mode="rb") \
                    if self.gzipped else raw
                lines = self._lines(stream)
                if self.kind == ".jsonl":
                    yield from self._jsonl(lines)
                elif self.mode == "files":
                    yield from self._whole_file(lines)
                else:
                    yield from self._blank_line_documents(lines)
        except (gzip.BadGzipFile, zlib.error):
            raise CorpusError(
                f"{self.path} is not gzip data, though its name ends in "
                ".gz. Rename it or compress it again.") from None
        except EOFError:
            raise CorpusError(
                f"{self.path} ends before its gzip stream does (a truncated "
                "download or copy?). Fetch the file again.") from None
        except PermissionError:
            raise CorpusError(
                f"{self.path} cannot be read (permission denied). Give "
                "read access or leave the file out.") from None

    def _lines(self, stream):
        """Decoded lines (line endings kept off), checked for binary data
        (NUL bytes in the first 8 KB, or in a line that is not UTF-8) and
        for UTF-8. A file without line breaks is one line, read whole."""
        if b"\0" in stream.peek(_SNIFF_BYTES)[:_SNIFF_BYTES]:
            raise CorpusError(
                f"{self.path} is a binary file, not text (it holds NUL "
                "bytes). Leave it out of the inputs.")
        position = self.start
        for number, line in enumerate(stream, 1):
            if self.end is not None:
                if position >= self.end:
                    break
                position += len(line)
            if number == 1 and not self.start and \
                    line.startswith(b"\xef\xbb\xbf"):
                line = line[3:]  # a UTF-8 byte order mark
            try:
                yield number, line.decode("utf-8").rstrip("\r\n")
            except UnicodeDecodeError as error:
                if b"\0" in line:
                    raise CorpusError(
                        f"{self.path} is a binary file, not text "
                        f"({self._line(number)} holds "
                        "NUL bytes). Leave it out of the inputs.") from None
                raise CorpusError(
                    f"{self._where(number)}: not UTF-8 text ({error.reason} "
                    f"at byte {error.start} of the line). Convert the file to "
                    "UTF-8 (e.g. `iconv -f latin1 -t utf-8`) or leave it "
                    "out.") from None

    def _blank_line_documents(self, lines):
        document = []
        for _, line in lines:
            if line.strip():
                document.append(line)
            elif document:
                yield "\n".join(document)
                document = []
        if document:
            yield "\n".join(document)

    def _whole_file(self, lines):
        document = [line for _, line in lines]
        while document and not document[-1].strip():
            document.pop()
        first = next((i for i, line in enumerate(document) if line.strip()),
                     len(document))
        if document[first:]:
            yield "\n".join(document[first:])

    def _jsonl(self, lines):
        field = self.text_field
        for number, line in lines:
            if not line.strip():
                continue
            try:
                record = json.loads(line)
            except json.JSONDecodeError as error:
                raise CorpusError(
                    f"{self._where(number)}: not JSON ({error.msg} at "
                    f"column {error.colno}). A .jsonl file holds one JSON "
                    "object per line; fix or remove that line.") from None
            if not isinstance(record, dict) or field not in record:
                fields = ", ".join(sorted(record)[:8]) \
                    if isinstance(record, dict) else type(record).__name__
                raise CorpusError(
                    f"{self._where(number)}: no {field!r} field (it "
                    f"has: {fields or 'nothing'}). Name the text's field "
                    "with --text-field (text_field=...).")
            text = document_text(record[field], self._where(number), field,
                                 "field")
            if text is not None:
                yield text


def text_mode(text, kind, documents):
    """The `text` mode a file is read with: `text` itself, or for
    `"auto"`, `"lines"` for a `.txt` file of blank-line-separated
    documents (BERT's input), `"paragraphs"` for a book
    (`documents="files"`) or a `.jsonl` file."""
    if text != "auto":
        return text
    return "lines" if kind == ".txt" and documents == "blank-lines" \
        else "paragraphs"


_BLANK_LINE = re.compile(r"\n[^\S\n]*\n")


def document_sentences(document, mode):
    """A document's text -> the pieces a corpus stores (see the module
    doc), each after the first of a document led by the space before it
    in the running text (`running_text_sentences`), except in `"raw"`."""
    from kzoo.preprocessing.packing import running_text_sentences
    from kzoo.preprocessing.sentence_pairs import split_sentences
    if mode == "raw":
        return [document] if document.strip() else []
    if mode == "lines":
        return running_text_sentences(document.split("\n"))
    sentences = []
    for paragraph in _BLANK_LINE.split(document):
        # min_words=0: a piece of punctuation alone ("* * *") is kept too.
        sentences += split_sentences(paragraph, min_words=0)
    return running_text_sentences(sentences)
