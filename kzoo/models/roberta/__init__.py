"""RoBERTa: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.masked_lm import RobertaMaskedLM
from kzoo.models.roberta.preprocessor import (
    RobertaMaskedLMPreprocessor,
    RobertaPreprocessor,
)
from kzoo.models.roberta.text_classifier import RobertaTextClassifier
from kzoo.models.roberta.tokenizer import RobertaTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). RoBERTa's tokenizer is GPT-2's byte-level BPE with fairseq's ids.
BUILDS_ON = ("gpt2",)

__all__ = [
    "RobertaBackbone", "RobertaMaskedLM", "RobertaMaskedLMPreprocessor",
    "RobertaPreprocessor", "RobertaTextClassifier", "RobertaTokenizer",
]
