"""RemBERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.rembert.backbone import RemBertBackbone
from kzoo.models.rembert.masked_lm import RemBertMaskedLM
from kzoo.models.rembert.preprocessor import (
    RemBertMaskedLMPreprocessor,
    RemBertPreprocessor,
)
from kzoo.models.rembert.text_classifier import RemBertTextClassifier
from kzoo.models.rembert.tokenizer import RemBertTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). RemBERT's encoder is
# BERT's (its converter reads BertLayout); its tokenizer is ALBERT's
# SentencePiece preprocessing with RemBERT's defaults.
BUILDS_ON = ("bert", "albert")

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("rembert",),
    objectives=("mlm",),
)

__all__ = [
    "RemBertBackbone", "RemBertMaskedLM", "RemBertMaskedLMPreprocessor",
    "RemBertPreprocessor", "RemBertTextClassifier", "RemBertTokenizer",
]
