"""DeBERTa-v3: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.deberta_v3.backbone import DebertaV3Backbone
from kzoo.models.deberta_v3.masked_lm import DebertaV3MaskedLM
from kzoo.models.deberta_v3.preprocessor import (
    DebertaV3MaskedLMPreprocessor,
    DebertaV3Preprocessor,
)
from kzoo.models.deberta_v3.text_classifier import DebertaV3TextClassifier
from kzoo.models.deberta_v3.tokenizer import DebertaV3Tokenizer

__all__ = [
    "DebertaV3Backbone", "DebertaV3MaskedLM",
    "DebertaV3MaskedLMPreprocessor", "DebertaV3Preprocessor",
    "DebertaV3TextClassifier", "DebertaV3Tokenizer",
]
