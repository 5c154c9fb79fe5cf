"""BART: backbone, tokenizer, preprocessor and the seq2seq task."""

from kzoo.core.families import Family
from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.denoising_preprocessor import BartDenoisingPreprocessor
from kzoo.models.bart.preprocessor import (BartPreprocessor,
                                          BartSeq2SeqLMPreprocessor)
from kzoo.models.bart.seq2seq_lm import BartDenoisingLM, BartSeq2SeqLM
from kzoo.models.bart.text_classifier import BartTextClassifier
from kzoo.models.bart.tokenizer import BartTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). BART reads text with RoBERTa's byte-level BPE tokenizer and packing.
BUILDS_ON = ("roberta",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("bart",),
    objectives=("denoising",),
)

__all__ = ["BartBackbone", "BartDenoisingLM", "BartDenoisingPreprocessor",
           "BartPreprocessor", "BartSeq2SeqLM", "BartSeq2SeqLMPreprocessor",
           "BartTextClassifier", "BartTokenizer"]
