"""BART: backbone, tokenizer, preprocessor and the seq2seq task."""

from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.denoising_preprocessor import BartDenoisingPreprocessor
from kzoo.models.bart.preprocessor import (BartPreprocessor,
                                          BartSeq2SeqLMPreprocessor)
from kzoo.models.bart.seq2seq_lm import BartDenoisingLM, BartSeq2SeqLM
from kzoo.models.bart.text_classifier import BartTextClassifier
from kzoo.models.bart.tokenizer import BartTokenizer

__all__ = ["BartBackbone", "BartDenoisingLM", "BartDenoisingPreprocessor",
           "BartPreprocessor", "BartSeq2SeqLM", "BartSeq2SeqLMPreprocessor",
           "BartTextClassifier", "BartTokenizer"]
