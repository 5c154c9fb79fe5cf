"""AWD-LSTM (ULMFiT): backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.awd_lstm.backbone import AwdLstmBackbone
from kzoo.models.awd_lstm.language_model import AwdLstmLanguageModel
from kzoo.models.awd_lstm.preprocessor import (
    AwdLstmLanguageModelPreprocessor,
    AwdLstmPreprocessor,
)
from kzoo.models.awd_lstm.text_classifier import AwdLstmTextClassifier
from kzoo.models.awd_lstm.tokenizer import AwdLstmTokenizer

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    original_format="fastai",  # fastai's .pth state dict + its itos vocabulary
    objectives=("lm",),
)

__all__ = [
    "AwdLstmBackbone", "AwdLstmLanguageModel",
    "AwdLstmLanguageModelPreprocessor", "AwdLstmPreprocessor",
    "AwdLstmTextClassifier", "AwdLstmTokenizer",
]
