"""XLM-RoBERTa: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.xlm_roberta.backbone import XLMRobertaBackbone
from kzoo.models.xlm_roberta.masked_lm import XLMRobertaMaskedLM
from kzoo.models.xlm_roberta.preprocessor import (
    XLMRobertaMaskedLMPreprocessor,
    XLMRobertaPreprocessor,
)
from kzoo.models.xlm_roberta.text_classifier import XLMRobertaTextClassifier
from kzoo.models.xlm_roberta.tokenizer import XLMRobertaTokenizer

__all__ = [
    "XLMRobertaBackbone", "XLMRobertaMaskedLM",
    "XLMRobertaMaskedLMPreprocessor", "XLMRobertaPreprocessor",
    "XLMRobertaTextClassifier", "XLMRobertaTokenizer",
]
