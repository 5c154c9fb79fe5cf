"""Exact-duplicate documents, found when a preparation is finalized.

A document's key is a 128-bit BLAKE2b hash of what the corpus stores of
it: its token ids and where each of its sentences ends. Equal keys mean
the same training text: the text as the tokenizer normalised it
(Unicode normalisation and whitespace, and case and accents for an
uncased vocabulary), which is what the model would read twice. Hashing
the stored ids rather than the text lets the keys be computed once
every part and process has written its shards, over the whole corpus,
with no change to what a worker writes.

The first copy in corpus order (sorted-file order, as a single run
lists the documents) is kept and every later one removed, so a
duplicate can never sit on both sides of the held-out split
(`kzoo/corpus/heldout.py`). Memory: 16 bytes a document (the keys).
"""

import hashlib

import numpy as np

# A key: two unsigned 64-bit words of the document's BLAKE2b-128 digest.
KEY = np.dtype([("high", "<u8"), ("low", "<u8")])


def document_keys(shard):
    """The keys of a `kzoo.corpus.Shard`'s documents, in order."""
    keys = np.zeros((shard.num_documents,), KEY)
    raw = keys.view(np.uint8).reshape(-1, KEY.itemsize)
    starts = np.asarray(shard.sentence_starts)
    for index in range(shard.num_documents):
        first, end = shard.document_sentence_range(index)
        digest = hashlib.blake2b(digest_size=16)
        digest.update(np.ascontiguousarray(
            shard.tokens[starts[first]:starts[end]]).tobytes())
        digest.update(np.diff(starts[first:end + 1]).tobytes())
        raw[index] = np.frombuffer(digest.digest(), np.uint8)
    return keys


def first_copies(keys):
    """Per shard (`keys`: one array of keys per shard, in corpus order) a
    mask of the documents kept: each key's first occurrence."""
    everything = np.concatenate(keys) if keys else np.zeros((0,), KEY)
    keep = np.zeros(everything.shape, bool)
    keep[np.unique(everything, return_index=True)[1]] = True
    bounds = np.cumsum([0] + [len(k) for k in keys])
    return [keep[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
