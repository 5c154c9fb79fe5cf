"""A preparation's arguments checked before any work starts, and the
comparison with the corpus already in the output (up to date, or
prepared otherwise and refused)."""

import os
from pathlib import Path

import numpy as np

from kzoo.corpus.output_folder import read_existing
from kzoo.corpus.shards import FORMAT, MANIFEST, CorpusError
from kzoo.corpus.sources import DOCUMENT_MODES, TEXT_MODES
from kzoo.corpus.validation_split import MAX_DEFAULT_VALIDATION


def check_options(documents, text, text_field, shard_tokens,
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


def check_processes(processes):
    if processes is None:
        return max(1, min(4, os.cpu_count() or 1))
    if isinstance(processes, bool) or not isinstance(
            processes, (int, np.integer)) or processes < 1:
        raise CorpusError(f"processes must be an integer >= 1; got "
                          f"{processes!r}.")
    return int(processes)


def load_tokenizer(tokenizer):
    from kzoo.core.tokenizer import Tokenizer
    if isinstance(tokenizer, Tokenizer):
        return tokenizer
    if isinstance(tokenizer, (str, Path)):
        return Tokenizer.from_preset(str(tokenizer))
    raise CorpusError("tokenizer must be a kzoo Tokenizer or a preset name "
                      f"or folder; got {type(tokenizer).__name__}.")


def same_preparation(manifest, tokenizer_record, options, records):
    return (manifest.get("format") == FORMAT
            and manifest.get("tokenizer") == tokenizer_record
            and manifest.get("options") == options
            and manifest.get("sources") == records)


def refuse_other_preparation(output, tokenizer_record, options, overwrite):
    """Another tokenizer or other options than the corpus already in
    `output`: refused unless `overwrite`. Changed inputs alone are
    prepared again."""
    if overwrite:
        return
    for path in [output / MANIFEST,
                 *sorted(output.glob("manifest.part-*.json"))]:
        existing = read_existing(path)
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
