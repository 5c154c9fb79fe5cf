"""Pretraining objectives as preprocessing (tf.data-side)."""

from kzoo.preprocessing.masking import MaskedLMMasker
from kzoo.preprocessing.sentence_pairs import (
    next_sentence_pairs, sentence_order_pairs, split_sentences)

__all__ = ["MaskedLMMasker", "next_sentence_pairs", "sentence_order_pairs",
           "split_sentences"]
