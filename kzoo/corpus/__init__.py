"""Corpora tokenized once into shards on disk, for pretraining at scale.

`kzoo.corpus.Corpus` reads a prepared corpus through memory maps; see
`kzoo/corpus/shards.py` for the format and why.
"""

from kzoo.corpus.shards import Corpus, CorpusError, Shard
from kzoo.corpus.tokenizer_hash import tokenizer_hash

__all__ = ["Corpus", "CorpusError", "Shard", "tokenizer_hash"]
