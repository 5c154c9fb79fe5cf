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

Order and determinism. The sorted input files are grouped into units of
work: runs of consecutive files holding about one shard of text each
(`shard_tokens` x 4 bytes; a larger file is a unit by itself). A unit is
tokenized by one process into its own shards, cut every `shard_tokens`
tokens at a document boundary and named by part, unit and index
(`part-0000-of-0001-u00003-00001`); the manifest lists them in unit order.
So the same inputs and options give the same manifest, shard for shard,
whatever the number of processes; parallelism comes from having several
units (a single huge file is read by one process).

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
prepares only the i-th of n runs of the sorted input files (cut at about
equal bytes) into OUTPUT, with a part manifest
`manifest.part-000i-of-000n.json`; when the last part finishes and every
part manifest is there, the parts are merged into `manifest.json`
(`merge_parts(output)`, `kzoo prepare-corpus --merge OUTPUT`, does it by
hand). Nothing here launches machines: any scheduler that runs n copies
of one command on a shared file system fans it out, e.g. a SLURM array
(`--array=0-15`, `--part $SLURM_ARRAY_TASK_ID/16`), a Kubernetes Indexed
Job (`$JOB_COMPLETION_INDEX`), GNU parallel over `seq 0 15`, Ray
(`ray.remote` around `prepare_corpus(..., part=(i, 16))`, one task per i)
or an Apache Beam `ParDo` over `range(16)`; then `--merge` once (or let
the last part do it). The merged corpus holds the same documents in the
same order as a single run's, in differently named shards.
"""

import multiprocessing
import os
import shutil
import sys
import time
import warnings
from contextlib import contextmanager
from pathlib import Path

import numpy as np

from kzoo.corpus.shards import (FORMAT, MANIFEST, SHARDS_FOLDER,
                                TOKENIZER_FOLDER, CorpusError, read_manifest,
                                token_dtype, write_manifest,
                                write_shard_arrays)
from kzoo.corpus.sources import (DOCUMENT_MODES, TEXT_MODES, SourceReader,
                                 document_sentences, find_sources,
                                 group_files, source_record, split_parts,
                                 text_mode)
from kzoo.corpus.tokenizer_hash import tokenizer_hash
from kzoo.utils.files import read_json, sha256_of, write_json

try:
    import fcntl
except ImportError:  # Windows: no advisory locks; runs are not guarded
    fcntl = None

DEFAULT_SHARD_TOKENS = 1 << 24
# Input bytes per token, to size a unit of work at about one shard (English
# text runs 4-5 bytes per WordPiece or byte-level BPE token).
BYTES_PER_TOKEN = 4
# A batch handed to the tokenizer: this many documents or bytes of text.
BATCH_DOCUMENTS = 1000
BATCH_BYTES = 1 << 20
# Default held-out share: 1% of the documents, at most this many.
MAX_DEFAULT_VALIDATION = 1000
MARKER = ".kzoo-corpus"


def prepare_corpus(inputs, output, tokenizer, *, documents="blank-lines",
                   text="auto", text_field="text",
                   shard_tokens=DEFAULT_SHARD_TOKENS,
                   validation_documents=None, processes=None, part=None,
                   overwrite=False, progress=True):
    """Tokenize text files into a sharded corpus in `output`.

    Args:
        inputs: files, folders (searched recursively) or glob patterns of
            `.txt`, `.jsonl`, `.txt.gz`, `.jsonl.gz` files.
        output: the corpus folder to write.
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
        validation_documents: how many of the last documents to hold out
            (default: 1% of the documents, at most 1,000).
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
    started = time.perf_counter()
    options = _check_options(documents, text, text_field, shard_tokens,
                             validation_documents)
    processes = _check_processes(processes)
    part = parse_part(part)
    records = [source_record(path) for path in find_sources(inputs)]
    output = Path(output)
    _check_output(output)
    tokenizer = _load_tokenizer(tokenizer)
    tokenizer_record = {"class": type(tokenizer).__name__,
                        "sha256": tokenizer_hash(tokenizer),
                        "vocabulary_size": int(tokenizer.vocabulary_size)}
    if part is not None:
        records = split_parts(records, part[1])[part[0]]
    name = _part_manifest_name(part) if part else MANIFEST
    prefix = _shard_prefix(part or (0, 1))
    with _locked(output, part):
        existing = _read_existing(output / name)
        if existing is not None and _same_preparation(
                existing, tokenizer_record, options, records):
            merged = part is None or _merge_if_complete(output, part[1],
                                                        progress)
            if progress is True:
                what = f"part {part[0]}/{part[1]} of {output}" if part \
                    else str(output)
                print(f"{what} is up to date.", file=sys.stderr)
            return dict(_summary(existing), up_to_date=True, merged=merged,
                        seconds=0.0, mb_per_second=0.0)
        _refuse_other_preparation(output, tokenizer_record, options,
                                  overwrite)
        # From here on the old corpus is gone: the manifest first, so that
        # no reader takes half-replaced shards for a corpus.
        _remove_file(output / name)
        _remove_file(output / MANIFEST)
        if part is None:  # a single run replaces any parts
            for path in output.glob("manifest.part-*-of-*.json"):
                _remove_file(path)
        _clean_shards(output, prefix if part else "")
        _save_tokenizer(tokenizer, tokenizer_record, output)
        dtype = token_dtype(tokenizer_record["vocabulary_size"])
        units = group_files(records, shard_tokens * BYTES_PER_TOKEN)
        results = _run_units(units, type(tokenizer), tokenizer, output,
                             prefix, options, dtype, processes, progress)
        shard_records = [r for result in results for r in result["shards"]]
        files = [f for result in results for f in result["files"]]
        for file in files:
            if not file["documents"]:
                warnings.warn(f"{file['path']} holds no text; it was "
                              "skipped.", stacklevel=2)
        if part is None and not shard_records:
            raise CorpusError(
                "The inputs hold no text: every file is empty or blank "
                f"({', '.join(r['path'] for r in records[:3])}"
                f"{', ...' if len(records) > 3 else ''}). Check the inputs.")
        manifest = {"tokenizer": tokenizer_record, "dtype":
                    np.dtype(dtype).name, "sources": records,
                    "options": options, "shards": shard_records}
        if part is None:
            manifest = _finalize(output, [dict(manifest, part=[0, 1])])
            write_manifest(output, manifest)
            _clean_shards(output, "", keep=_listed(manifest))
            merged = True
        else:
            manifest["part"] = list(part)
            manifest.update(_counts(shard_records))
            write_manifest_as(output / name, manifest)
            merged = _merge_if_complete(output, part[1], progress)
    seconds = time.perf_counter() - started
    summary = dict(_summary(manifest), up_to_date=False, merged=merged,
                   seconds=seconds, mb_per_second=_summary(manifest)["bytes"]
                   / 1e6 / max(seconds, 1e-9))
    if progress is True:
        print(describe(summary), file=sys.stderr)
    return summary


def describe(summary):
    """One line: what a preparation wrote, and how fast."""
    return (f"{summary['documents']:,} documents, {summary['sentences']:,} "
            f"sentences, {summary['tokens']:,} tokens in {summary['shards']}"
            f" shards (+{summary['validation_documents']:,} validation "
            f"documents); {summary['bytes'] / 1e6:,.1f} MB of text in "
            f"{summary['seconds']:.1f} s ({summary['mb_per_second']:.2f} "
            "MB/s)")


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


def merge_parts(output, progress=True):
    """Merge the part manifests of `output` into its `manifest.json`.

    Raises `CorpusError` when a part is missing or the parts disagree (a
    tokenizer or options of their own)."""
    output = Path(output)
    manifests = sorted(output.glob("manifest.part-*-of-*.json"))
    if not manifests:
        raise CorpusError(
            f"{output} holds no part manifests (manifest.part-I-of-N.json) "
            "to merge. Prepare the parts first: `kzoo prepare-corpus PRESET "
            f"INPUTS... --output {output} --part I/N`.")
    counts = {read_json(path)["part"][1] for path in manifests}
    if len(counts) > 1:
        raise CorpusError(
            f"{output} holds parts of {sorted(counts)} parts each: prepare "
            "every part with the same N (remove the others' "
            "manifest.part-*.json).")
    count = counts.pop()
    if not _merge_if_complete(output, count, progress):
        present = {read_json(path)["part"][0] for path in manifests}
        missing = [str(i) for i in range(count) if i not in present]
        raise CorpusError(
            f"{output} lacks part(s) {', '.join(missing)} of {count}: "
            f"run `kzoo prepare-corpus ... --part {missing[0]}/{count}` "
            "for each, then merge.")
    return read_manifest(output)


# ----------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------
def _check_options(documents, text, text_field, shard_tokens,
                   validation_documents):
    if documents not in DOCUMENT_MODES:
        raise CorpusError(f"documents must be one of {DOCUMENT_MODES}; got "
                          f"{documents!r}.")
    if text not in TEXT_MODES:
        raise CorpusError(f"text must be one of {TEXT_MODES}; got "
                          f"{text!r}.")
    if not isinstance(text_field, str) or not text_field:
        raise CorpusError(f"text_field must be a field name; got "
                          f"{text_field!r}.")
    if isinstance(shard_tokens, bool) or not isinstance(
            shard_tokens, (int, np.integer)) or shard_tokens < 1:
        raise CorpusError(f"shard_tokens must be a positive integer; got "
                          f"{shard_tokens!r}.")
    if validation_documents is not None and (
            isinstance(validation_documents, bool)
            or not isinstance(validation_documents, (int, np.integer))
            or validation_documents < 0):
        raise CorpusError("validation_documents must be an integer >= 0 "
                          f"(or None: 1%, at most {MAX_DEFAULT_VALIDATION})"
                          f"; got {validation_documents!r}.")
    return {"documents": documents, "text": text, "text_field": text_field,
            "shard_tokens": int(shard_tokens),
            "validation_documents": None if validation_documents is None
            else int(validation_documents)}


def _check_processes(processes):
    if processes is None:
        return max(1, min(4, os.cpu_count() or 1))
    if isinstance(processes, bool) or not isinstance(
            processes, (int, np.integer)) or processes < 1:
        raise CorpusError(f"processes must be an integer >= 1; got "
                          f"{processes!r}.")
    return int(processes)


def _check_output(output):
    if output.exists() and not output.is_dir():
        raise CorpusError(f"{output} is a file; the corpus output is a "
                          "folder. Give a new or empty folder's path.")
    if output.is_dir() and not _is_corpus_folder(output):
        names = sorted(p.name for p in output.iterdir())
        if names:
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5
                                            else "")
            raise CorpusError(
                f"{output} holds other files ({shown}) and no kzoo corpus. "
                "Give a new or empty folder for the corpus; nothing was "
                "written.")
    try:
        (output / SHARDS_FOLDER).mkdir(parents=True, exist_ok=True)
        (output / MARKER).write_text(FORMAT + "\n")
        probe = output / f".write-test-{os.getpid()}"
        probe.write_bytes(b"")
        probe.unlink()
    except OSError as error:
        raise CorpusError(
            f"Cannot write the corpus to {output} "
            f"({error.strerror or error}). Choose a folder you can write "
            "to.") from None


def _is_corpus_folder(folder):
    if (folder / MARKER).is_file():
        return True
    for path in [folder / MANIFEST, *folder.glob("manifest.part-*.json")]:
        try:
            if read_json(path).get("format") == FORMAT:
                return True
        except (OSError, ValueError):
            pass
    return False


def _load_tokenizer(tokenizer):
    from kzoo.core.tokenizer import Tokenizer
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if isinstance(tokenizer, (str, Path)):
        return Tokenizer.from_preset(str(tokenizer))
    raise CorpusError("tokenizer must be a kzoo Tokenizer or a preset name "
                      f"or folder; got {type(tokenizer).__name__}.")


def _read_existing(path):
    if not path.is_file():
        return None
    try:
        return read_json(path)
    except ValueError:
        return None


def _same_preparation(manifest, tokenizer_record, options, records):
    return (manifest.get("format") == FORMAT
            and manifest.get("tokenizer") == tokenizer_record
            and manifest.get("options") == options
            and manifest.get("sources") == records)


def _refuse_other_preparation(output, tokenizer_record, options, overwrite):
    """Another tokenizer or other options than the corpus already in
    `output`: refused unless `overwrite`. Changed inputs alone are
    prepared again."""
    if overwrite:
        return
    for path in [output / MANIFEST,
                 *sorted(output.glob("manifest.part-*.json"))]:
        existing = _read_existing(path)
        if existing is None:
            continue
        if existing.get("tokenizer", {}).get("sha256") != \
                tokenizer_record["sha256"]:
            theirs = existing.get("tokenizer", {}).get("class", "?")
            theirs_hash = existing.get("tokenizer", {}).get("sha256", "?")
            raise CorpusError(
                f"{output} holds a corpus tokenized by another tokenizer "
                f"({theirs}, hash {theirs_hash[:12]}; this one is {tokenizer_record['class']}, "
                f"{tokenizer_record['sha256'][:12]}). Pass --overwrite "
                "(overwrite=True) to replace it, or choose another output.")
        if existing.get("options") != options:
            changed = ", ".join(
                f"{key} {existing.get('options', {}).get(key)!r} -> "
                f"{value!r}" for key, value in options.items()
                if existing.get("options", {}).get(key) != value)
            raise CorpusError(
                f"{output} holds a corpus prepared with other options "
                f"({changed}). Pass --overwrite (overwrite=True) to replace "
                "it, or choose another output.")


# ----------------------------------------------------------------------
# Files in the output
# ----------------------------------------------------------------------
def _part_manifest_name(part):
    return f"manifest.part-{part[0]:04d}-of-{part[1]:04d}.json"


def _shard_prefix(part):
    return f"part-{part[0]:04d}-of-{part[1]:04d}-"


def write_manifest_as(path, manifest):
    """A part manifest: the corpus format, written atomically."""
    from kzoo.corpus.shards import FORMAT_VERSION
    write_json(path, dict(manifest, format=FORMAT,
                          format_version=FORMAT_VERSION))


def _remove_file(path):
    try:
        path.unlink()
    except FileNotFoundError:
        pass


def _listed(manifest):
    return {record["name"] for key in ("shards", "validation_shards")
            for record in manifest.get(key) or []}


def _clean_shards(output, prefix, keep=()):
    """Remove the shard folders whose names start with `prefix` (and
    their unfinished `.NAME.partial-*` copies) but those in `keep`."""
    shards = output / SHARDS_FOLDER
    if not shards.is_dir():
        return
    for path in shards.iterdir():
        name = path.name
        bare = name[1:].split(".partial-")[0] if name.startswith(".") \
            else name
        if bare.startswith(prefix) and name not in keep:
            if path.is_dir():
                shutil.rmtree(path, ignore_errors=True)
            else:
                _remove_file(path)


def _save_tokenizer(tokenizer, record, output):
    """The tokenizer into OUTPUT/tokenizer, unless the one there has the
    same hash (parts running at once all find or write the same files)."""
    from kzoo.utils.files import swap_into_place
    folder = output / TOKENIZER_FOLDER
    if folder.is_dir():
        try:
            saved = type(tokenizer).from_preset(str(folder))
            if tokenizer_hash(saved) == record["sha256"]:
                return
        except Exception:  # noqa: BLE001 - damaged or foreign: replaced
            pass
    staging = output / f".{TOKENIZER_FOLDER}.partial-{os.getpid()}"
    shutil.rmtree(staging, ignore_errors=True)
    tokenizer.save_to_preset(staging)
    # A preset folder needs a metadata.json; its files' sha256 make
    # `from_preset` refuse a damaged copy.
    write_json(staging / "metadata.json", {
        "name": f"{output.name}-tokenizer",
        "description": "The tokenizer a kzoo corpus was prepared with "
                       "(kzoo prepare-corpus).",
        "tokenizer": {name: {"sha256": sha256_of(staging / name)}
                      for name in tokenizer.asset_files.values()}})
    swap_into_place(staging, folder)


@contextmanager
def _locked(output, part):
    """One preparation per output (per part for part runs): a second one
    is refused at once, not left to mix its shards with the first's."""
    name = ".lock" if part is None else \
        f".lock.part-{part[0]:04d}-of-{part[1]:04d}"
    if fcntl is None:
        yield
        return
    with open(output / name, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            raise CorpusError(
                f"Another kzoo prepare-corpus is writing {output}"
                f"{'' if part is None else f' (part {part[0]}/{part[1]})'}."
                " Wait for it to finish, or choose another output.") \
                from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


@contextmanager
def _merge_lock(output):
    if fcntl is None:
        yield
        return
    with open(output / ".lock.merge", "a+") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


# ----------------------------------------------------------------------
# Merging parts, holding out validation documents
# ----------------------------------------------------------------------
def _merge_if_complete(output, count, progress):
    """Merge when all `count` part manifests agree; True when
    `manifest.json` then lists the whole corpus."""
    with _merge_lock(output):
        parts = []
        for index in range(count):
            manifest = _read_existing(output / _part_manifest_name(
                (index, count)))
            if manifest is None:
                return False
            parts.append(manifest)
        first = parts[0]
        for manifest in parts[1:]:
            for key in ("tokenizer", "options"):
                if manifest[key] != first[key]:
                    raise CorpusError(
                        f"The parts in {output} disagree on their {key} "
                        f"(part 0's and part {manifest['part'][0]}'s "
                        "differ). Prepare every part with the same "
                        "tokenizer and options.")
        sources = [record for manifest in parts
                   for record in manifest["sources"]]
        existing = _read_existing(output / MANIFEST)
        if existing is not None and existing.get("sources") == sources and \
                existing.get("tokenizer") == first["tokenizer"] and \
                existing.get("options") == first["options"] and \
                existing.get("parts") == _parts_entry(parts):
            return True
        if not any(manifest["shards"] for manifest in parts):
            raise CorpusError(
                f"The inputs of {output}'s {count} parts hold no text: every "
                "file is empty or blank. Check the inputs.")
        manifest = _finalize(output, parts)
        write_manifest(output, manifest)
        keep = _listed(manifest)
        for part in parts:
            keep |= _listed(part)
        _clean_shards(output, "", keep=keep | {
            path.name for path in (output / SHARDS_FOLDER).glob(".*")})
        if progress and count > 1:
            print(f"Merged {count} parts into {output / MANIFEST}.",
                  file=sys.stderr)
        return True


def _parts_entry(parts):
    return [dict({"part": manifest["part"][0], "of": manifest["part"][1]},
                 **_counts(manifest["shards"]),
                 sources=len(manifest["sources"]))
            for manifest in parts]


def _counts(records):
    return {"documents": sum(r["documents"] for r in records),
            "sentences": sum(r["sentences"] for r in records),
            "tokens": sum(r["tokens"] for r in records)}


def _finalize(output, parts):
    """The corpus manifest of `parts` (part manifests, in order), with
    the last documents held out for validation."""
    first = parts[0]
    shards = [record for manifest in parts for record in manifest["shards"]]
    total = sum(record["documents"] for record in shards)
    requested = first["options"]["validation_documents"]
    held = min(MAX_DEFAULT_VALIDATION, total // 100) if requested is None \
        else requested
    if held and held >= total:
        raise CorpusError(
            f"validation_documents={held} would hold out every one of the "
            f"corpus' {total} documents. Ask for fewer (--validation-"
            "documents), or add text.")
    train, validation = _hold_out(output, shards, held)
    manifest = {
        "tokenizer": first["tokenizer"], "dtype": first["dtype"],
        "options": first["options"],
        "sources": [r for manifest in parts for r in manifest["sources"]],
        "parts": _parts_entry(parts),
        "shards": train, "validation_shards": validation,
        "bytes": sum(r["bytes"] for m in parts for r in m["sources"]),
        **_counts(train),
        "validation": _counts(validation),
    }
    return manifest


def _hold_out(output, shards, held):
    """`(train, validation)` records: the last `held` documents moved to
    validation; the shard they start inside written again as two."""
    train = list(shards)
    validation = []
    while held and train:
        record = train.pop()
        if record["documents"] <= held:
            validation.insert(0, record)
            held -= record["documents"]
            continue
        keep = record["documents"] - held
        head, tail = _split_shard(output / SHARDS_FOLDER, record, keep)
        train.append(head)
        validation.insert(0, tail)
        held = 0
    return train, validation


def _split_shard(shards_dir, record, keep):
    """Shard `record` written again as `NAME-train` (its first `keep`
    documents) and `NAME-validation` (the rest)."""
    folder = shards_dir / record["name"]
    tokens = np.load(folder / "tokens.npy", mmap_mode="r")
    sentences = np.load(folder / "sentences.npy", mmap_mode="r")
    documents = np.load(folder / "documents.npy", mmap_mode="r")
    cut_sentence = int(documents[keep])
    cut_token = int(sentences[cut_sentence])
    head = write_shard_arrays(
        shards_dir, record["name"] + "-train", tokens[:cut_token],
        sentences[:cut_sentence + 1], documents[:keep + 1])
    tail = write_shard_arrays(
        shards_dir, record["name"] + "-validation", tokens[cut_token:],
        np.asarray(sentences[cut_sentence:]) - cut_token,
        np.asarray(documents[keep:]) - cut_sentence)
    return head, tail


def _summary(manifest):
    validation = manifest.get("validation") or {"documents": 0}
    return {"documents": manifest.get("documents", 0),
            "sentences": manifest.get("sentences", 0),
            "tokens": manifest.get("tokens", 0),
            "shards": len(manifest.get("shards", [])),
            "validation_documents": validation["documents"],
            "bytes": sum(r["bytes"] for r in manifest.get("sources", []))}


# ----------------------------------------------------------------------
# Tokenizing: units of work, in this process or in several
# ----------------------------------------------------------------------
def _run_units(units, tokenizer_class, tokenizer, output, prefix, options,
               dtype, processes, progress):
    """Each unit's `{"shards", "files"}`, in unit order."""
    total = sum(record["bytes"] for unit in units for record in unit)
    bar = _progress_bar(total, progress)
    jobs = [(index, [r["path"] for r in unit], str(output), prefix, options,
             np.dtype(dtype).name) for index, unit in enumerate(units)]
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
    """Tokenize one unit's files into its shards."""
    if _Worker.error is not None:
        raise _Worker.error
    index, paths, output, prefix, options, dtype = job
    writer = _ShardWriter(Path(output) / SHARDS_FOLDER,
                          f"{prefix}u{index:05d}-", options["shard_tokens"],
                          np.dtype(dtype))
    files = []
    for path in paths:
        reader = SourceReader(path, options["documents"],
                              options["text_field"])
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
        _count(Path(path).stat().st_size, counted, on_progress)
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


class _ShardWriter:
    """Collects ids as flat arrays and writes a shard each time
    `shard_tokens` is reached, at the next document boundary."""

    def __init__(self, shards_dir, prefix, shard_tokens, dtype):
        self.shards_dir = shards_dir
        self.prefix = prefix
        self.shard_tokens = shard_tokens
        self.dtype = dtype
        self.records = []
        self._tokens, self._lengths, self._documents = [], [], []
        self._count = 0

    def add(self, tokens, sentence_lengths, document_sentences):
        if not document_sentences.size:
            return
        self._tokens.append(tokens)
        self._lengths.append(sentence_lengths.astype(np.int64))
        self._documents.append(document_sentences.astype(np.int64))
        self._count += tokens.size
        while self._count >= self.shard_tokens:
            self._write(cut=True)

    def finish(self):
        if self._count or self._documents:
            self._write(cut=False)
        return self.records

    def _write(self, cut):
        tokens = np.concatenate(self._tokens)
        lengths = np.concatenate(self._lengths)
        documents = np.concatenate(self._documents)
        sentence_starts = np.zeros((lengths.size + 1,), np.int64)
        np.cumsum(lengths, out=sentence_starts[1:])
        document_starts = np.zeros((documents.size + 1,), np.int64)
        np.cumsum(documents, out=document_starts[1:])
        end = documents.size
        if cut:  # the first document that reaches shard_tokens ends it
            document_tokens = sentence_starts[document_starts[1:]]
            end = int(np.searchsorted(document_tokens, self.shard_tokens)) + 1
        end_sentence = int(document_starts[end])
        end_token = int(sentence_starts[end_sentence])
        name = f"{self.prefix}{len(self.records):05d}"
        self.records.append(write_shard_arrays(
            self.shards_dir, name, tokens[:end_token],
            sentence_starts[:end_sentence + 1], document_starts[:end + 1]))
        rest = end < documents.size
        # Copies: the written shard's arrays are let go.
        self._tokens = [tokens[end_token:].copy()] if rest else []
        self._lengths = [lengths[end_sentence:].copy()] if rest else []
        self._documents = [documents[end:].copy()] if rest else []
        self._count = int(tokens.size - end_token)
