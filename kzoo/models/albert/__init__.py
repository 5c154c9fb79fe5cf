"""ALBERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.masked_lm import AlbertMaskedLM
from kzoo.models.albert.preprocessor import (
    AlbertMaskedLMPreprocessor,
    AlbertPreprocessor,
)
from kzoo.models.albert.pretrainer import (
    AlbertPretrainer,
    AlbertPretrainerPreprocessor,
)
from kzoo.models.albert.text_classifier import AlbertTextClassifier
from kzoo.models.albert.tokenizer import AlbertTokenizer

__all__ = [
    "AlbertBackbone", "AlbertMaskedLM", "AlbertMaskedLMPreprocessor",
    "AlbertPreprocessor", "AlbertPretrainer", "AlbertPretrainerPreprocessor",
    "AlbertTextClassifier", "AlbertTokenizer",
]
