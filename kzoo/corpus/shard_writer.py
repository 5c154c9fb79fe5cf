"""Token ids into shards of about `shard_tokens` each, cut at document
boundaries (`kzoo/corpus/shards.py` for the format)."""

import numpy as np

from kzoo.corpus.shards import write_shard_arrays


class ShardWriter:
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
