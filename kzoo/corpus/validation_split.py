"""The held-out split: the last documents of the corpus, in sorted-file
order (default 1% of them, at most 1,000), set aside for validation.

`hold_out` moves whole shards of held-out documents to the validation
list and writes the one shard the split starts inside again as two
(`NAME-train`, `NAME-validation`).
"""

import numpy as np

from kzoo.corpus.shards import (SHARDS_FOLDER, CorpusError,
                                write_shard_arrays)

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


def hold_out(output, shards, held):
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
        head, tail = split_shard(output / SHARDS_FOLDER, record, keep)
        train.append(head)
        validation.insert(0, tail)
        held = 0
    return train, validation


def split_shard(shards_dir, record, keep):
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
