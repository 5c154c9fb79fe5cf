"""Tokenize a corpus once, into shards on disk (`kzoo prepare-corpus`).

`prepare_corpus(inputs, output, tokenizer)` reads `.txt`/`.jsonl` files
(and `.gz`; see `kzoo/corpus/sources.py` for what a document is), cuts
each document into sentences as its `text` mode says (`"lines"`: one a
line, BERT's input; `"paragraphs"`: running text split by
`kzoo.preprocessing.split_sentences`; `"raw"`: the document whole,
newlines and indentation kept), tokenizes them as the running text they
come from (`running_text_sentences`: every sentence after the first of
its document keeps its leading space, which byte-level BPE spells into
its first token), and writes the ids into shards (`kzoo/corpus/shards.py`)
with the tokenizer and a manifest:

    OUTPUT/tokenizer/        the tokenizer (its preset files)
    OUTPUT/shards/NAME/      tokens.npy, sentences.npy, documents.npy
    OUTPUT/manifest.json     shards, validation_shards, sources, options

Order and determinism. The sorted input files are cut into pieces and
grouped into units of work of about one shard of text each
(`shard_tokens` x 4 bytes): runs of consecutive small files, or byte
ranges of a large one cut where a document begins
(`kzoo/corpus/partition.py`; a `.gz` file or a `documents="files"` book
stays whole). A unit is tokenized by one process into its own shards,
cut every `shard_tokens` tokens at a document boundary and named by
part, unit and index (`part-0000-of-0001-u00003-00001`); the manifest
lists them in unit order. So the same inputs and options give the same
manifest, shard for shard, whatever the number of processes, and one
100 GB `.jsonl` keeps every process busy.

Held-out documents. The last `validation_documents` documents of the
corpus (in sorted-file order; default 1% of the documents, at most 1,000)
are its validation split (`Corpus(folder, split="validation")`): the
shards holding only such documents are listed as `validation_shards`, and
the one shard they start inside is written again as two
(`NAME-train`, `NAME-validation`).

Memory. A process holds one batch of documents (about 1 MB of text) and
one shard's ids (2 bytes a token for vocabularies up to 65,536), so peak
memory does not grow with the corpus; a `documents="files"` document is
held whole.

Re-runs. The manifest records each input's size and mtime, the
tokenizer's hash and the options: running again on unchanged inputs does
nothing ("up to date"); another tokenizer or other options over an
existing corpus are refused unless `overwrite=True`. A preparation first
removes the manifest it will replace, writes every shard atomically and
the manifest last, so an interrupted one leaves no corpus that reads as
complete; the next run removes its leftovers and starts over.

Beyond one machine. `part=(i, n)` (`--part i/n`, i counting from 0)
prepares only the i-th of n equal byte spans of the sorted input files
(cut at document starts, inside a large file too) into OUTPUT, with a
part manifest `manifest.part-000i-of-000n.json` that records the file
list it split and the byte ranges it took; when the last part finishes
and every part manifest is there, the parts are checked to split one
file list into disjoint, complete ranges (`kzoo/corpus/part_checks.py`)
and merged into `manifest.json`
(`merge_parts(output)`, `kzoo prepare-corpus --merge OUTPUT`, does it by
hand). Nothing here launches machines: any scheduler that runs n copies
of one command on a shared file system fans it out, e.g. a SLURM array
(`--array=0-15`, `--part $SLURM_ARRAY_TASK_ID/16`), a Kubernetes Indexed
Job (`$JOB_COMPLETION_INDEX`), GNU parallel over `seq 0 15`, Ray
(`ray.remote` around `prepare_corpus(..., part=(i, 16))`, one task per i)
or an Apache Beam `ParDo` over `range(16)`; then `--merge` once (or let
the last part do it). The merged corpus holds the same documents in the
same order as a single run's, in differently named shards.

The jobs, one module each: `preparation_options.py` (the arguments
checked, the corpus already there compared), `output_folder.py` (the
folder's files, locks and clean-up), `sources.py` (which files, and their
documents), `partition.py` (the files cut into parts and units),
`part_checks.py` (parts checked before a merge), `tokenizing.py` (units
tokenized in one process or a pool), `shard_writer.py` (ids cut into
shards), `merge.py` (part manifests into `manifest.json`),
`validation_split.py` (the held-out documents) and `report.py` (counts
and the summary line).
"""

import sys
import time
import warnings
from pathlib import Path

import numpy as np

from kzoo.corpus import remote
from kzoo.corpus.merge import finalize, merge_if_complete, merge_parts
from kzoo.corpus.output_folder import (check_output, clean_shards,
                                       listed_shards, locked,
                                       part_manifest_name, read_existing,
                                       remove_file, save_tokenizer,
                                       shard_prefix, write_manifest_as)
from kzoo.corpus.preparation_options import (check_options,
                                             check_processes,
                                             load_tokenizer,
                                             refuse_other_preparation,
                                             same_preparation)
from kzoo.corpus.report import count_totals, describe, summary_of
from kzoo.corpus.shards import (MANIFEST, CorpusError, token_dtype,
                                write_manifest)
from kzoo.corpus.partition import all_pieces, group_units, split_parts
from kzoo.corpus.sources import find_sources, source_record
from kzoo.corpus.tokenizer_hash import tokenizer_hash
from kzoo.corpus.tokenizing import run_units
from kzoo.utils import storage

__all__ = ["DEFAULT_SHARD_TOKENS", "describe", "merge_parts",
           "parse_part", "prepare_corpus"]

DEFAULT_SHARD_TOKENS = 1 << 24
# Input bytes per token, to size a unit of work at about one shard (English
# text runs 4-5 bytes per WordPiece or byte-level BPE token).
BYTES_PER_TOKEN = 4


def prepare_corpus(inputs, output, tokenizer, *, documents="blank-lines",
                   text="auto", text_field="text",
                   shard_tokens=DEFAULT_SHARD_TOKENS,
                   validation_documents=None, deduplicate=False,
                   processes=None, part=None, overwrite=False,
                   progress=True):
    """Tokenize text files into a sharded corpus in `output`.

    Args:
        inputs: files, folders (searched recursively) or glob patterns of
            `.txt`, `.jsonl`, `.txt.gz`, `.jsonl.gz`, `.parquet` files, and
            Hugging Face dataset folders (`kzoo/corpus/readers.py`); each
            a local path or a URL (`s3://`, `gs://`, `hf://`: copied into
            the local cache first, `kzoo/corpus/remote.py`).
        output: the corpus folder to write, or a URL to commit it to
            (prepared locally, then uploaded with a commit marker last).
        tokenizer: a kzoo `Tokenizer`, or a preset name or folder whose
            tokenizer to use.
        documents: `"blank-lines"` (blank lines separate a `.txt` file's
            documents) or `"files"` (each `.txt` file is one document).
        text: how a document's text is cut into sentences: `"lines"`
            (each line one sentence, BERT's input), `"paragraphs"`
            (running text, split at sentence ends), `"raw"` (the document
            whole, newlines and indentation kept: a causal LM's corpus),
            or `"auto"`: `"lines"` for `.txt` with
            `documents="blank-lines"`, else `"paragraphs"`.
        text_field: the field of a `.jsonl` line that holds its text.
        shard_tokens: tokens per shard (a shard ends at the first document
            boundary at or past it).
        validation_documents: how many documents to hold out, drawn by a
            hash of their content (default: 1% of the documents, at most
            1,000; `kzoo/corpus/heldout.py`).
        deduplicate: remove exact duplicate documents, keeping the first
            (`kzoo/corpus/dedup.py`); the summary's `duplicate_documents`
            counts them.
        processes: tokenizing processes (default `min(4, cpu count)`).
        part: `(i, n)` or `"i/n"`: prepare only part i (from 0) of n.
        overwrite: replace a corpus prepared with another tokenizer or
            other options.
        progress: show a progress bar and a summary on stderr (`"bar"`:
            the bar only).

    Returns:
        A summary dict: `documents`, `sentences`, `tokens`, `shards`,
        `validation_documents`, `bytes`, `seconds`, `mb_per_second`,
        `up_to_date` (True when nothing needed doing), `merged` (True when
        `manifest.json` now lists the whole corpus).

    Example:
    ```python
    summary = kzoo.corpus.prepare_corpus(
        "my_books/", "my_corpus", "bert_base_en_uncased",
        documents="files", validation_documents=2)
    corpus = kzoo.corpus.Corpus("my_corpus")
    print(summary["tokens"], corpus.num_documents)
    ```
    """
    if storage.is_url(output) or any(
            storage.is_url(item) for item in
            ([inputs] if isinstance(inputs, (str, Path)) else inputs)):
        return _prepare_with_urls(
            inputs, output, tokenizer, documents=documents, text=text,
            text_field=text_field, shard_tokens=shard_tokens,
            validation_documents=validation_documents,
            deduplicate=deduplicate, processes=processes, part=part,
            overwrite=overwrite, progress=progress)
    return _prepare(
        inputs, output, tokenizer, documents=documents, text=text,
        text_field=text_field, shard_tokens=shard_tokens,
        validation_documents=validation_documents,
        deduplicate=deduplicate, processes=processes, part=part,
        overwrite=overwrite, progress=progress)


def _prepare_with_urls(inputs, output, tokenizer, *, part, progress,
                       **options):
    """`prepare_corpus` where an input or the output is a URL
    (`kzoo/corpus/remote.py`): the output's access is checked and the
    inputs fetched before any work, the corpus prepared locally and,
    unless up to date, committed to the URL."""
    url = str(output) if storage.is_url(output) else None
    part = parse_part(part)
    # The arguments' own errors before any download or upload.
    check_options(options["documents"], options["text"],
                  options["text_field"], options["shard_tokens"],
                  options["validation_documents"])
    check_processes(options["processes"])
    if url is not None:
        output = remote.staging_folder(url, part)
    inputs = remote.local_inputs(inputs)
    summary = _prepare(inputs, output, tokenizer, part=part,
                       progress=progress and "bar", **options)
    if url is not None and not summary["up_to_date"]:
        remote.publish(Path(output), url)
    if progress is True:
        print(f"{url or output} is up to date." if summary["up_to_date"]
              else describe(summary), file=sys.stderr)
    return summary


def _prepare(inputs, output, tokenizer, *, documents, text, text_field,
             shard_tokens, validation_documents, deduplicate, processes,
             part, overwrite, progress):
    started = time.perf_counter()
    options = check_options(documents, text, text_field, shard_tokens,
                             validation_documents)
    if deduplicate:
        # Recorded only when asked: a corpus prepared before the option
        # existed keeps options equal to a run without it (up to date).
        options["deduplicate"] = True
    processes = check_processes(processes)
    part = parse_part(part)
    records = [source_record(path) for path in find_sources(inputs)]
    output = Path(output)
    check_output(output)
    tokenizer = load_tokenizer(tokenizer)
    tokenizer_record = {"class": type(tokenizer).__name__,
                        "sha256": tokenizer_hash(tokenizer),
                        "vocabulary_size": int(tokenizer.vocabulary_size)}
    if part is not None:
        pieces = split_parts(records, part[1], documents)[part[0]]
    else:
        pieces = all_pieces(records)
    name = part_manifest_name(part) if part else MANIFEST
    prefix = shard_prefix(part or (0, 1))
    with locked(output, part):
        existing = read_existing(output / name)
        if existing is not None and same_preparation(
                existing, tokenizer_record, options, records):
            merged = part is None or merge_if_complete(
                output, part[1], progress, reference=part[0])
            if progress is True:
                what = f"part {part[0]}/{part[1]} of {output}" if part \
                    else str(output)
                print(f"{what} is up to date.", file=sys.stderr)
            return dict(summary_of(existing), up_to_date=True, merged=merged,
                        seconds=0.0, mb_per_second=0.0)
        refuse_other_preparation(output, tokenizer_record, options,
                                  overwrite)
        # From here on the old corpus is gone: the manifest first, so that
        # no reader takes half-replaced shards for a corpus.
        remove_file(output / name)
        remove_file(output / MANIFEST)
        if part is None:  # a single run replaces any parts
            for path in output.glob("manifest.part-*-of-*.json"):
                remove_file(path)
        clean_shards(output, prefix if part else "")
        save_tokenizer(tokenizer, tokenizer_record, output)
        dtype = token_dtype(tokenizer_record["vocabulary_size"])
        units = group_units(pieces, shard_tokens * BYTES_PER_TOKEN, records,
                            documents)
        results = run_units(units, records, type(tokenizer), tokenizer,
                            output, prefix, options, dtype, processes,
                            progress)
        shard_records = [r for result in results for r in result["shards"]]
        documents_of = {}
        for result in results:
            for file in result["files"]:
                documents_of[file["path"]] = documents_of.get(
                    file["path"], 0) + file["documents"]
        for path, count in documents_of.items():
            if not count:
                warnings.warn(f"{path} holds no text; it was skipped.",
                              stacklevel=2)
        if part is None and not shard_records:
            raise CorpusError(
                "The inputs hold no text: every file is empty or blank "
                f"({', '.join(r['path'] for r in records[:3])}"
                f"{', ...' if len(records) > 3 else ''}). Check the inputs.")
        manifest = {"tokenizer": tokenizer_record, "dtype":
                    np.dtype(dtype).name, "sources": records,
                    "options": options, "shards": shard_records}
        if part is None:
            manifest = finalize(output, [dict(manifest, part=[0, 1])])
            write_manifest(output, manifest)
            clean_shards(output, "", keep=listed_shards(manifest))
            merged = True
        else:
            # The file list it partitioned and the byte ranges it took:
            # the merge checks that the parts agree on the one and tile
            # it with the other.
            manifest["part"] = list(part)
            manifest["pieces"] = [[p["file"], p["start"], p["end"]]
                                  for p in pieces]
            manifest.update(count_totals(shard_records))
            write_manifest_as(output / name, manifest)
            merged = merge_if_complete(output, part[1], progress,
                                       reference=part[0])
    seconds = time.perf_counter() - started
    summary = dict(summary_of(manifest), up_to_date=False, merged=merged,
                   seconds=seconds, mb_per_second=summary_of(manifest)["bytes"]
                   / 1e6 / max(seconds, 1e-9))
    if progress is True:
        print(describe(summary), file=sys.stderr)
    return summary


def parse_part(part):
    """`"i/n"` or `(i, n)` -> `(i, n)` with 0 <= i < n; None stays None."""
    if part is None:
        return None
    try:
        index, count = (part.split("/") if isinstance(part, str)
                        else part)
        index, count = int(index), int(count)
    except (TypeError, ValueError):
        raise CorpusError(
            f"part must be I/N, e.g. 3/16 (part 3 of 16, counting from "
            f"0); got {part!r}.") from None
    if not 0 <= index < count:
        raise CorpusError(
            f"part {index}/{count}: I counts from 0 and must be below N "
            f"(0/{count} ... {count - 1}/{count}).")
    return index, count
