"""BERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm import BertMaskedLM
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models.bert.pretrainer import BertPretrainer, BertPretrainerPreprocessor
from kzoo.models.bert.text_classifier import BertTextClassifier
from kzoo.models.bert.text_embedder import BertTextEmbedder
from kzoo.models.bert.tokenizer import BertTokenizer

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("bert",),
    objectives=("mlm_nsp", "mlm"),
)

__all__ = [
    "BertBackbone", "BertMaskedLM", "BertMaskedLMPreprocessor",
    "BertPreprocessor", "BertPretrainer", "BertPretrainerPreprocessor",
    "BertTextClassifier", "BertTextEmbedder", "BertTokenizer",
]
