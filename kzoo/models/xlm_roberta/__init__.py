"""XLM-RoBERTa: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.xlm_roberta.backbone import XLMRobertaBackbone
from kzoo.models.xlm_roberta.masked_lm import XLMRobertaMaskedLM
from kzoo.models.xlm_roberta.preprocessor import (
    XLMRobertaMaskedLMPreprocessor,
    XLMRobertaPreprocessor,
)
from kzoo.models.xlm_roberta.text_classifier import XLMRobertaTextClassifier
from kzoo.models.xlm_roberta.tokenizer import XLMRobertaTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). XLM-R is RoBERTa's architecture with a SentencePiece vocabulary.
BUILDS_ON = ("roberta",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("xlm-roberta",),
    objectives=("mlm",),
)

__all__ = [
    "XLMRobertaBackbone", "XLMRobertaMaskedLM",
    "XLMRobertaMaskedLMPreprocessor", "XLMRobertaPreprocessor",
    "XLMRobertaTextClassifier", "XLMRobertaTokenizer",
]
