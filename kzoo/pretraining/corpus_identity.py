"""What a pretraining run records of its corpus, and what changed since.

A checkpoint's stream state is a position in the corpus (an epoch's
document permutation, a document, a sentence): restored into another
corpus it points at other text, and documents held out for validation
may become training data. So a run's identity holds the corpus' own
hash, `corpus_record(corpus)["sha256"]`: a sha256 over what defines
the examples, read from each corpus' manifest
(`kzoo.corpus.shards.read_manifest`): the tokenizer, the ids' dtype,
the preparation options (`--documents`, `--text`, `--shard-tokens`,
`--validation-documents`, ...) and every
training and validation shard's record (its name, counts and the sha256
of its ids). The input files' paths and times are not in it: the same
text prepared again from a moved or touched folder is the same corpus,
and resuming on it is right.

The record a checkpoint keeps besides the hash (the options, each input
file's size and time, the validation split's size) is only for the
message when the hash differs: `describe_change` names the files added,
removed or changed and the options that differ.
"""

import hashlib
import json

from kzoo.corpus.shards import read_manifest

# The manifest entries that define what the examples are made of.
DEFINING = ("tokenizer", "dtype", "options", "shards", "validation_shards")
# Names listed in a message, at most, per kind of change.
SHOWN = 3


def corpus_record(corpus):
    """`{"sha256", "corpora": [record, ...]}` of a run's corpus: a
    `kzoo.corpus.Corpus`, or a mixture (an object whose `corpora` are
    `Corpus`es), one record per corpus in order: `{"folder", "sha256",
    "options", "sources", "validation_documents"}` (see the module doc).
    The whole's sha256 covers every corpus' in order, not the folders'
    names."""
    records = [dict(folder_record(part.folder), folder=str(part.folder))
               for part in getattr(corpus, "corpora", [corpus])]
    digest = hashlib.sha256(" ".join(
        record["sha256"] for record in records).encode("utf-8"))
    return {"sha256": digest.hexdigest(), "corpora": records}


def folder_record(folder):
    """One prepared corpus folder's record (see `corpus_record`)."""
    manifest = read_manifest(folder)
    defining = {key: manifest.get(key) for key in DEFINING}
    digest = hashlib.sha256(json.dumps(
        defining, sort_keys=True, separators=(",", ":")).encode("utf-8"))
    validation = manifest.get("validation_shards") or []
    return {
        "sha256": digest.hexdigest(),
        "options": manifest.get("options") or {},
        "sources": {record["path"]: [record.get("bytes"),
                                     record.get("mtime_ns")]
                    for record in manifest.get("sources") or []},
        "validation_documents": sum(r["documents"] for r in validation),
    }


def describe_change(before, now):
    """What differs between two `corpus_record`s, in words: per corpus
    (in order), the input files added, removed or changed, the options,
    the validation split (the shards' ids when nothing else tells)."""
    old, new = before.get("corpora") or [], now["corpora"]
    said = [f"{record['folder']}: " + _folder_change(was, record)
            for was, record in zip(old, new)
            if was.get("sha256") != record["sha256"]]
    if len(old) != len(new):
        said.append(f"{len(old)} corpora there, {len(new)} now")
    return "; ".join(said) or "the corpora's order"


def _folder_change(before, now):
    parts = []
    old_files, new_files = before.get("sources") or {}, now["sources"]
    for what, names in (
            ("added", [p for p in new_files if p not in old_files]),
            ("removed", [p for p in old_files if p not in new_files]),
            ("changed", [p for p in new_files if p in old_files
                         and list(old_files[p]) != list(new_files[p])])):
        if names:
            more = f" and {len(names) - SHOWN} more" \
                if len(names) > SHOWN else ""
            parts.append(f"files {what}: {', '.join(names[:SHOWN])}{more}")
    old_options, new_options = before.get("options") or {}, now["options"]
    for name in sorted(set(old_options) | set(new_options)):
        if old_options.get(name) != new_options.get(name):
            parts.append(f"{name} {old_options.get(name)!r} there, "
                         f"{new_options.get(name)!r} now")
    old_held = before.get("validation_documents")
    if old_held != now["validation_documents"]:
        parts.append(f"validation documents {old_held} there, "
                     f"{now['validation_documents']} now")
    if not parts:
        parts.append("the same files and options, other ids in its shards "
                     "(prepared again from changed text)")
    return ", ".join(parts)
