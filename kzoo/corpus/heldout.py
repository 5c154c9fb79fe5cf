"""The held-out split, drawn by a stable hash of each document, with
exact duplicates removed first (`kzoo/corpus/dedup.py`).

The documents held out are the `held` ones (default 1% of the
documents, at most 1,000: `validation_split.held_out_count`, counted
after duplicates are removed) whose keys
(a hash of their content) are smallest. Whether a document is held out
depends on its own text and on that cut-off alone, not on where it sits:
the last documents of the last file (a split by position) are often one
book, one site or one month, and appending files moved the split. As
duplicates are removed before the draw, no copy of a held-out document
is trained on.

A shard that loses no document and holds none of the split is kept as
it is; any other is written again as `NAME-train` (its kept training
documents) and `NAME-validation` (its held-out ones), each only when it
has documents.
"""

import numpy as np

from kzoo.corpus.dedup import document_keys, first_copies
from kzoo.corpus.report import count_totals
from kzoo.corpus.shards import SHARDS_FOLDER, Shard, write_shard_arrays
from kzoo.corpus.validation_split import held_out_count


def split_corpus(output, shards, requested, deduplicate=False):
    """`(train, validation, removed)`: the shard records of the training
    and held-out documents (`requested` of them: see `held_out_count`,
    counted after duplicates go), and the counts of the duplicate
    documents removed (`{"documents", "sentences", "tokens"}`; none
    unless `deduplicate`)."""
    folder = output / SHARDS_FOLDER
    opened = [Shard(folder / record["name"], record) for record in shards]
    keys = [document_keys(shard) for shard in opened]
    kept = first_copies(keys) if deduplicate else \
        [np.ones(len(k), bool) for k in keys]
    held = held_out_count(int(sum(k.sum() for k in kept)), requested)
    held_out = _held_out(keys, kept, held)
    train, validation, removed = [], [], []
    for shard, keep, out in zip(opened, kept, held_out):
        if keep.all() and not out.any():
            train.append(shard.record)
            continue
        removed.append(_counts(shard, ~keep))
        for mask, suffix, records in ((keep & ~out, "-train", train),
                                      (out, "-validation", validation)):
            if mask.any():
                records.append(write_documents(folder, shard, mask,
                                               shard.name + suffix))
    return train, validation, count_totals(removed)


def _held_out(keys, kept, held):
    """Per shard, a mask of the `held` kept documents with the smallest
    keys (the first word of the key orders them; ties are as rare as a
    64-bit collision and go to the earlier document)."""
    order = np.concatenate([k["high"] for k in keys]) if keys else \
        np.zeros((0,), np.uint64)
    candidates = np.flatnonzero(np.concatenate(kept)) if keys else order
    chosen = np.zeros(order.shape, bool)
    if held:
        smallest = np.argsort(order[candidates], kind="stable")[:held]
        chosen[candidates[smallest]] = True
    bounds = np.cumsum([0] + [len(k) for k in keys])
    return [chosen[a:b] for a, b in zip(bounds[:-1], bounds[1:])]


def _counts(shard, mask):
    """`{"documents", "sentences", "tokens"}` of `shard`'s documents in
    `mask`."""
    sentences = np.diff(np.asarray(shard.document_starts))
    sentence_mask = np.repeat(mask, sentences)
    lengths = np.diff(np.asarray(shard.sentence_starts))
    return {"documents": int(mask.sum()),
            "sentences": int(sentence_mask.sum()),
            "tokens": int(lengths[sentence_mask].sum())}


def write_documents(shards_dir, shard, mask, name):
    """Shard `name`: the documents of `shard` in `mask`, in order."""
    sentences = np.diff(np.asarray(shard.document_starts))
    lengths = np.diff(np.asarray(shard.sentence_starts))
    sentence_mask = np.repeat(mask, sentences)
    token_mask = np.repeat(sentence_mask, lengths)
    kept_lengths = lengths[sentence_mask]
    sentence_starts = np.zeros((kept_lengths.size + 1,), np.int64)
    np.cumsum(kept_lengths, out=sentence_starts[1:])
    document_starts = np.zeros((int(mask.sum()) + 1,), np.int64)
    np.cumsum(sentences[mask], out=document_starts[1:])
    return write_shard_arrays(shards_dir, name,
                              np.asarray(shard.tokens)[token_mask],
                              sentence_starts, document_starts)
