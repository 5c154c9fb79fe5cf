"""BERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm import BertMaskedLM
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models.bert.pretrainer import BertPretrainer, BertPretrainerPreprocessor
from kzoo.models.bert.text_classifier import BertTextClassifier
from kzoo.models.bert.text_embedder import BertTextEmbedder
from kzoo.models.bert.tokenizer import BertTokenizer

__all__ = [
    "BertBackbone", "BertMaskedLM", "BertMaskedLMPreprocessor",
    "BertPreprocessor", "BertPretrainer", "BertPretrainerPreprocessor",
    "BertTextClassifier", "BertTextEmbedder", "BertTokenizer",
]
