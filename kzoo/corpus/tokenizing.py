"""Units of work tokenized into shards: in this process, or in a pool of
spawned ones, each with the tokenizer read back from the corpus folder."""

import multiprocessing
import sys
from pathlib import Path

import numpy as np

from kzoo.corpus.partition import byte_range
from kzoo.corpus.shard_writer import ShardWriter
from kzoo.corpus.shards import SHARDS_FOLDER, TOKENIZER_FOLDER
from kzoo.corpus.sources import SourceReader, document_sentences, text_mode

# A batch handed to the tokenizer: this many documents or bytes of text.
BATCH_DOCUMENTS = 1000
BATCH_BYTES = 1 << 20


def run_units(units, records, tokenizer_class, tokenizer, output, prefix,
              options, dtype, processes, progress):
    """Each unit's `{"shards", "files"}`, in unit order."""
    total = sum(piece["end"] - piece["start"] for unit in units
                for piece in unit)
    bar = _progress_bar(total, progress)
    jobs = [(index, [(p["path"], byte_range(p, records),
                      p["end"] - p["start"]) for p in unit],
             str(output), prefix, options, np.dtype(dtype).name)
            for index, unit in enumerate(units)]
    processes = min(processes, len(jobs))
    try:
        if processes <= 1:
            counter = _Counter()
            _Worker.start(tokenizer, counter)
            results = []
            for job in jobs:
                results.append(_prepare_unit(job, lambda: bar.update(
                    counter.value - bar.n)))
            bar.update(counter.value - bar.n)
            return results
        context = multiprocessing.get_context("spawn")
        counter = context.Value("q", 0)
        with context.Pool(processes, initializer=_start_worker,
                          initargs=(tokenizer_class,
                                    str(output / TOKENIZER_FOLDER),
                                    counter)) as pool:
            pending = pool.imap(_prepare_unit, jobs)
            results = []
            while len(results) < len(jobs):
                try:
                    results.append(pending.next(timeout=0.5))
                except multiprocessing.TimeoutError:
                    pass
                bar.update(counter.value - bar.n)
            return results
    finally:
        bar.close()


def _progress_bar(total, progress):
    from tqdm.auto import tqdm
    return tqdm(total=total, unit="B", unit_scale=True, unit_divisor=1024,
                desc="prepare-corpus", disable=not progress, file=sys.stderr,
                dynamic_ncols=True, mininterval=1.0)


class _Counter:
    """`multiprocessing.Value`'s interface, for the in-process run."""

    def __init__(self):
        self.value = 0

    def get_lock(self):
        return _NoLock()


class _NoLock:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False


class _Worker:
    """The tokenizer and bytes counter of this process."""
    tokenizer = None
    counter = None
    error = None

    @classmethod
    def start(cls, tokenizer, counter):
        cls.tokenizer = tokenizer
        cls.counter = counter

    @classmethod
    def tokenize(cls, sentences):
        """A batch of sentences -> ragged ids, through the tokenizer's one
        traced graph (`kzoo.utils.traced`): called eagerly, keras-hub
        0.32's tokenizers take their pure-Python path (WordPiece: 0.3 MB/s
        of text here, 80% of preparation), traced they run
        tensorflow-text's kernels."""
        import tensorflow as tf

        from kzoo.utils.traced import traced_method
        tokenize = traced_method(
            cls.tokenizer, "tokenize_tf",
            input_signature=[tf.TensorSpec([None], tf.string)])
        return tokenize(tf.constant(sentences))


def _start_worker(tokenizer_class, tokenizer_folder, counter):
    """A spawned process: the tokenizer from the saved preset folder,
    through its class (pickled by reference; importing its module
    registers it). A failure is raised by the first unit, not here: a
    pool replaces a process whose initializer fails, forever."""
    try:
        _Worker.start(tokenizer_class.from_preset(tokenizer_folder), counter)
    except Exception as error:  # noqa: BLE001 - raised in _prepare_unit
        _Worker.error = error


def _prepare_unit(job, on_progress=None):
    """Tokenize one unit's pieces (byte ranges of files) into its
    shards."""
    if _Worker.error is not None:
        raise _Worker.error
    index, pieces, output, prefix, options, dtype = job
    writer = ShardWriter(Path(output) / SHARDS_FOLDER,
                          f"{prefix}u{index:05d}-", options["shard_tokens"],
                          np.dtype(dtype))
    files = []
    for path, span, size in pieces:
        reader = SourceReader(path, options["documents"],
                              options["text_field"], *(span or ()))
        mode = text_mode(options.get("text", "auto"), reader.kind,
                         options["documents"])
        counted = 0
        stats = {"path": path, "documents": 0, "sentences": 0, "tokens": 0}
        batch, size = [], 0
        for document in reader.documents():
            batch.append(document)
            size += len(document)
            if len(batch) >= BATCH_DOCUMENTS or size >= BATCH_BYTES:
                _tokenize_into(writer, batch, stats, mode)
                batch, size = [], 0
                counted = _count(reader.bytes_read, counted, on_progress)
        if batch:
            _tokenize_into(writer, batch, stats, mode)
        _count(size, counted, on_progress)
        files.append(stats)
    return {"shards": writer.finish(), "files": files}


def _count(position, counted, on_progress):
    counter = _Worker.counter
    with counter.get_lock():
        counter.value += position - counted
    if on_progress is not None:
        on_progress()
    return position


def _tokenize_into(writer, documents, stats, mode):
    """Cut `documents` into sentences (`mode`: see `document_sentences`),
    tokenize them all at once, and hand the ids to `writer`; empty
    sentences and documents are dropped."""
    sentences, per_document = [], []
    for document in documents:
        pieces = document_sentences(document, mode)
        sentences += pieces
        per_document.append(len(pieces))
    if not sentences:
        return
    ids = _Worker.tokenize(sentences)
    tokens = ids.flat_values.numpy().astype(writer.dtype, copy=False)
    lengths = np.diff(ids.row_splits.numpy())
    # Drop sentences the tokenizer leaves no ids of, then empty documents.
    owner = np.repeat(np.arange(len(per_document)), per_document)
    kept = lengths > 0
    per_document = np.bincount(owner[kept], minlength=len(per_document))
    lengths = lengths[kept]
    per_document = per_document[per_document > 0]
    stats["documents"] += int(per_document.size)
    stats["sentences"] += int(lengths.size)
    stats["tokens"] += int(tokens.size)
    writer.add(tokens, lengths, per_document)
