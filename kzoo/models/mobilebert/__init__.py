"""MobileBERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.mobilebert.backbone import MobileBertBackbone
from kzoo.models.mobilebert.masked_lm import MobileBertMaskedLM
from kzoo.models.mobilebert.preprocessor import (
    MobileBertMaskedLMPreprocessor,
    MobileBertPreprocessor,
)
from kzoo.models.mobilebert.text_classifier import MobileBertTextClassifier
from kzoo.models.mobilebert.tokenizer import MobileBertTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). MobileBERT reads
# text with BERT's WordPiece tokenizer, and its converter reads BERT's
# checkpoint layout (tokenizer files, heads).
BUILDS_ON = ("bert",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("mobilebert",),
    objectives=("mlm",),
)

__all__ = [
    "MobileBertBackbone", "MobileBertMaskedLM",
    "MobileBertMaskedLMPreprocessor", "MobileBertPreprocessor",
    "MobileBertTextClassifier", "MobileBertTokenizer",
]
