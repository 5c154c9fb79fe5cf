"""How many documents the held-out split holds (default 1% of them, at
most 1,000); which ones is `kzoo/corpus/heldout.py`'s."""

from kzoo.corpus.shards import CorpusError

# Default held-out share: 1% of the documents, at most this many.
MAX_DEFAULT_VALIDATION = 1000


def held_out_count(total, requested):
    """How many of `total` documents to hold out: `requested`, or by
    default 1% of them, at most `MAX_DEFAULT_VALIDATION`."""
    held = min(MAX_DEFAULT_VALIDATION, total // 100) if requested is None \
        else requested
    if held and held >= total:
        raise CorpusError(
            f"validation_documents={held} would hold out every one of the "
            f"corpus' {total} documents. Ask for fewer (--validation-"
            "documents), or add text.")
    return held
