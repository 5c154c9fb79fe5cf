"""What a preparation reports: document, sentence and token counts, and
one line for the terminal."""


def describe(summary):
    """One line: what a preparation wrote, and how fast."""
    return (f"{summary['documents']:,} documents, {summary['sentences']:,} "
            f"sentences, {summary['tokens']:,} tokens in {summary['shards']}"
            f" shards (+{summary['validation_documents']:,} validation "
            f"documents; {summary['duplicate_documents']:,} duplicate "
            f"documents removed); {summary['bytes'] / 1e6:,.1f} MB of text in "
            f"{summary['seconds']:.1f} s ({summary['mb_per_second']:.2f} "
            "MB/s)")


def count_totals(records):
    return {"documents": sum(r["documents"] for r in records),
            "sentences": sum(r["sentences"] for r in records),
            "tokens": sum(r["tokens"] for r in records)}


def summary_of(manifest):
    validation = manifest.get("validation") or {"documents": 0}
    return {"documents": manifest.get("documents", 0),
            "sentences": manifest.get("sentences", 0),
            "tokens": manifest.get("tokens", 0),
            "shards": len(manifest.get("shards", [])),
            "validation_documents": validation["documents"],
            "duplicate_documents": (manifest.get("duplicates") or {}).get(
                "documents", 0),
            "bytes": input_bytes(manifest)}


def input_bytes(manifest):
    """The bytes of text a manifest covers: a part's byte ranges
    (`pieces`), else every input file."""
    if "pieces" in manifest:
        return sum(end - start for _, start, end in manifest["pieces"])
    return sum(r["bytes"] for r in manifest.get("sources", []))
