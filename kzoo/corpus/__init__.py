"""Corpora tokenized once into shards on disk, for pretraining at scale.

`kzoo.corpus.prepare_corpus` (the `kzoo prepare-corpus` command) writes
one from text files; `kzoo.corpus.Corpus` reads it through memory maps;
see `kzoo/corpus/shards.py` for the format and why.
"""

from kzoo.corpus.prepare import merge_parts, prepare_corpus
from kzoo.corpus.shards import Corpus, CorpusError, Shard
from kzoo.corpus.tokenizer_hash import tokenizer_hash

__all__ = ["Corpus", "CorpusError", "Shard", "merge_parts", "prepare_corpus",
           "tokenizer_hash"]
