"""Batches of each pretraining objective, streamed from a prepared corpus;
see `base.py` for the determinism and resumption rules they all keep."""

from kzoo.pretraining.streams.base import BatchStream, CorpusWalk

__all__ = ["BatchStream", "CorpusWalk"]
