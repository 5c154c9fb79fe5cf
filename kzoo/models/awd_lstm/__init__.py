"""AWD-LSTM (ULMFiT): backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.awd_lstm.backbone import AwdLstmBackbone
from kzoo.models.awd_lstm.language_model import AwdLstmLanguageModel
from kzoo.models.awd_lstm.preprocessor import (
    AwdLstmLanguageModelPreprocessor,
    AwdLstmPreprocessor,
)
from kzoo.models.awd_lstm.text_classifier import AwdLstmTextClassifier
from kzoo.models.awd_lstm.tokenizer import AwdLstmTokenizer

__all__ = [
    "AwdLstmBackbone", "AwdLstmLanguageModel",
    "AwdLstmLanguageModelPreprocessor", "AwdLstmPreprocessor",
    "AwdLstmTextClassifier", "AwdLstmTokenizer",
]
