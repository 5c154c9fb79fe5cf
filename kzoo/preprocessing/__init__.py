"""Pretraining objectives as preprocessing (tf.data-side): masking (token,
whole-word, n-gram, span), sentence pairs (next-sentence, sentence-order),
RoBERTa's FULL-SENTENCES packing, T5's span corruption, BART's text
infilling, sentence permutation and token deletion."""

from kzoo.preprocessing.masking import MaskedLMMasker
from kzoo.preprocessing.packing import full_sentences, pack_full_sentences
from kzoo.preprocessing.sentence_pairs import (
    next_sentence_pairs, sentence_order_pairs, split_sentences)
from kzoo.preprocessing.span_corruption import (SpanCorrupter,
                                                span_corruption_lengths)
from kzoo.preprocessing.text_infilling import (infilling_spans,
                                               permute_sentences,
                                               text_infilling,
                                               token_deletion)
from kzoo.preprocessing.word_masking import (NgramMasker, SpanMasker,
                                             WholeWordMasker,
                                             ngram_length_probabilities,
                                             span_boundaries,
                                             span_length_probabilities)

__all__ = ["MaskedLMMasker", "WholeWordMasker", "NgramMasker", "SpanMasker",
           "span_boundaries", "span_length_probabilities",
           "ngram_length_probabilities", "full_sentences",
           "pack_full_sentences", "next_sentence_pairs",
           "sentence_order_pairs", "split_sentences", "SpanCorrupter",
           "span_corruption_lengths", "text_infilling", "infilling_spans",
           "permute_sentences", "token_deletion"]
