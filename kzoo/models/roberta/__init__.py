"""RoBERTa: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.masked_lm import RobertaMaskedLM
from kzoo.models.roberta.preprocessor import (
    RobertaMaskedLMPreprocessor,
    RobertaPreprocessor,
)
from kzoo.models.roberta.text_classifier import RobertaTextClassifier
from kzoo.models.roberta.tokenizer import RobertaTokenizer

__all__ = [
    "RobertaBackbone", "RobertaMaskedLM", "RobertaMaskedLMPreprocessor",
    "RobertaPreprocessor", "RobertaTextClassifier", "RobertaTokenizer",
]
