"""Part manifests merged into the corpus' `manifest.json`, with exact
duplicates removed (`kzoo/corpus/dedup.py`) and documents held out for
validation by a hash of their content (`kzoo/corpus/heldout.py`)."""

import sys
from pathlib import Path

from kzoo.corpus.heldout import split_corpus
from kzoo.corpus.output_folder import (clean_shards, listed_shards,
                                       merge_lock, part_manifest_name,
                                       read_existing)
from kzoo.corpus.part_checks import check_parts
from kzoo.corpus.report import count_totals
from kzoo.corpus.shards import (MANIFEST, SHARDS_FOLDER, CorpusError,
                                read_manifest, write_manifest)
from kzoo.utils.files import read_json


def merge_parts(output, progress=True):
    """Merge the part manifests of `output` into its `manifest.json`.

    Raises `CorpusError` when a part is missing or the parts disagree (a
    tokenizer, options or list of input files of their own, or byte
    ranges that overlap or leave a gap)."""
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
    if not merge_if_complete(output, count, progress):
        present = {read_json(path)["part"][0] for path in manifests}
        missing = [str(i) for i in range(count) if i not in present]
        raise CorpusError(
            f"{output} lacks part(s) {', '.join(missing)} of {count}: "
            f"run `kzoo prepare-corpus ... --part {missing[0]}/{count}` "
            "for each, then merge.")
    return read_manifest(output)


def merge_if_complete(output, count, progress, reference=0):
    """Merge when all `count` part manifests agree (`part_checks.py`;
    `reference`: the part whose file list is the current one); True
    when `manifest.json` then lists the whole corpus."""
    with merge_lock(output):
        parts = []
        for index in range(count):
            manifest = read_existing(output / part_manifest_name(
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
        if count > 1:
            check_parts(output, parts, reference)
        sources = first["sources"]
        existing = read_existing(output / MANIFEST)
        if existing is not None and existing.get("sources") == sources and \
                existing.get("tokenizer") == first["tokenizer"] and \
                existing.get("options") == first["options"] and \
                existing.get("parts") == parts_entry(parts):
            return True
        if not any(manifest["shards"] for manifest in parts):
            raise CorpusError(
                f"The inputs of {output}'s {count} parts hold no text: every "
                "file is empty or blank. Check the inputs.")
        manifest = finalize(output, parts)
        write_manifest(output, manifest)
        keep = listed_shards(manifest)
        for part in parts:
            keep |= listed_shards(part)
        clean_shards(output, "", keep=keep | {
            path.name for path in (output / SHARDS_FOLDER).glob(".*")})
        if progress and count > 1:
            print(f"Merged {count} parts into {output / MANIFEST}.",
                  file=sys.stderr)
        return True


def parts_entry(parts):
    return [dict({"part": manifest["part"][0], "of": manifest["part"][1]},
                 **count_totals(manifest["shards"]),
                 pieces=len(manifest.get("pieces") or ()))
            for manifest in parts]


def finalize(output, parts):
    """The corpus manifest of `parts` (part manifests, in order), its
    duplicates removed and its held-out documents drawn by hash."""
    first = parts[0]
    shards = [record for manifest in parts for record in manifest["shards"]]
    train, validation, duplicates = split_corpus(
        output, shards, first["options"]["validation_documents"],
        deduplicate=first["options"].get("deduplicate", False))
    manifest = {
        "tokenizer": first["tokenizer"], "dtype": first["dtype"],
        "options": first["options"],
        "sources": first["sources"],
        "parts": parts_entry(parts),
        "shards": train, "validation_shards": validation,
        "bytes": sum(r["bytes"] for r in first["sources"]),
        **count_totals(train),
        "validation": count_totals(validation),
        "duplicates": duplicates,  # the documents removed as copies
    }
    return manifest
