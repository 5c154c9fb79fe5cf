"""The text a vocabulary is trained on, streamed: never all of it at once.

Inputs are what `kzoo prepare-corpus` reads (`.txt`/`.jsonl` files, their
`.gz` forms, folders and glob patterns; `kzoo/corpus/sources.py` says what
a document is), or a prepared corpus folder, whose manifest names the
files it was prepared from and how their documents were read. A corpus
holds token ids of another vocabulary; the text itself is what a new
vocabulary is learnt from, so its source files are read again.

`TrainingTexts` yields documents (for the `tokenizers` trainers, which
count words and hold nothing else) or sentences (for SentencePiece, which
samples `input_sentence_size` of them), and counts what it gave.
"""

import contextlib
import itertools
from pathlib import Path

from kzoo.corpus.shards import CorpusError, MANIFEST, read_manifest
from kzoo.corpus.sources import (DOCUMENT_MODES, SourceReader, find_sources,
                                 source_record)
from kzoo.preprocessing.sentence_pairs import split_sentences

# SentencePiece skips a sentence longer than its `max_sentence_length`
# (bytes) with no more than a log line; sentences are cut to at most this
# many characters (at a space where there is one) so that none is skipped:
# 4 bytes a character at most in UTF-8, under MAX_SENTENCE_BYTES.
MAX_SENTENCE_CHARS = 2048
MAX_SENTENCE_BYTES = 4 * MAX_SENTENCE_CHARS


class TokenizerTrainingError(ValueError):
    """A vocabulary that cannot be trained as asked (bad size, family,
    kind, or no text); raised before anything is written."""


class TrainingTexts:
    """The documents of `inputs`, read lazily each time they are iterated.

    Args:
        inputs: files, folders, glob patterns, or a prepared corpus folder
            (one holding `manifest.json`).
        documents: `"blank-lines"` or `"files"` (see `kzoo.corpus`); for a
            prepared corpus, the corpus' own setting is used.
        text_field: the text's field in `.jsonl` lines (a prepared
            corpus: its own).
    """

    def __init__(self, inputs, documents="blank-lines", text_field="text"):
        if isinstance(inputs, (str, Path)):
            inputs = [inputs]
        inputs = [Path(item) for item in inputs]
        if documents not in DOCUMENT_MODES:
            raise TokenizerTrainingError(
                f"documents={documents!r}: use one of "
                f"{', '.join(DOCUMENT_MODES)}.")
        self.documents_mode = documents
        self.text_field = text_field
        corpora = [item for item in inputs if (item / MANIFEST).is_file()]
        if corpora and len(inputs) > 1:
            raise TokenizerTrainingError(
                "Give either one prepared corpus folder or text files and "
                "folders, not both; a corpus names its own text files.")
        try:
            self.paths = (self._corpus_sources(corpora[0]) if corpora
                          else find_sources(inputs))
        except CorpusError as error:
            raise TokenizerTrainingError(str(error)) from None
        self.documents_read = 0
        self.sentences_read = 0
        self.characters_read = 0

    def _corpus_sources(self, folder):
        manifest = read_manifest(folder)
        options = manifest.get("options", {})
        self.documents_mode = options.get("documents", self.documents_mode)
        self.text_field = options.get("text_field", self.text_field)
        paths = []
        for record in manifest.get("sources", []):
            path = Path(record["path"])
            if not path.is_file() or {
                    k: v for k, v in source_record(path).items()
                    if k in record} != record:
                raise TokenizerTrainingError(
                    f"{folder} was prepared from {path}, which is gone or "
                    "has changed since; a vocabulary is trained on the "
                    "text itself. Give the text files instead.")
            paths.append(path)
        if not paths:
            raise TokenizerTrainingError(
                f"{folder}'s manifest names no source files; give the text "
                "files instead.")
        return paths

    def documents(self, count=True):
        """Each document's text, file by file, in sorted path order;
        counted in `documents_read` and `characters_read` unless `count`
        is False (a trainer's first pass)."""
        for document in self._documents():
            if count:
                self.documents_read += 1
                self.characters_read += len(document)
            yield document

    def _documents(self):
        for path in self.paths:
            reader = SourceReader(path, self.documents_mode, self.text_field)
            try:
                yield from reader.documents()
            except CorpusError as error:
                raise TokenizerTrainingError(str(error)) from None

    def sentences(self):
        """Each document's sentences (`kzoo.preprocessing.split_sentences`,
        as `kzoo prepare-corpus` splits them), long ones cut to at most
        `MAX_SENTENCE_CHARS`."""
        for document in self.documents():
            for sentence in split_sentences(document, min_words=1):
                for piece in _cut(sentence, MAX_SENTENCE_CHARS):
                    self.sentences_read += 1
                    yield piece

    def check_not_empty(self):
        """Raise when the inputs hold no text at all (read up to the first
        document only)."""
        with contextlib.closing(self._documents()) as documents:
            if next(documents, None) is not None:
                return
        names = ", ".join(str(p) for p in self.paths[:3])
        more = ", ..." if len(self.paths) > 3 else ""
        raise TokenizerTrainingError(
            f"The inputs ({names}{more}) hold no text: every file is empty "
            "or blank. Give files with text to train a vocabulary on.")


def _cut(text, limit):
    """`text` in pieces of at most `limit` characters, cut at the last
    space before the limit where there is one (scripts written without
    spaces are cut anywhere)."""
    while len(text) > limit:
        cut = text.rfind(" ", 1, limit + 1)
        cut = limit if cut <= 0 else cut
        yield text[:cut]
        text = text[cut:].lstrip(" ")
    if text:
        yield text


def batched(iterable, size):
    """Lists of up to `size` items of `iterable`, lazily."""
    iterator = iter(iterable)
    while batch := list(itertools.islice(iterator, size)):
        yield batch
