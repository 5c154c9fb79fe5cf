"""DistilBERT: backbone, tokenizer, preprocessors, tasks and the
distiller that trains a student from a teacher."""

from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.distiller import (Distiller,
                                               init_student_from_teacher)
from kzoo.models.distil_bert.masked_lm import DistilBertMaskedLM
from kzoo.models.distil_bert.preprocessor import (
    DistilBertMaskedLMPreprocessor,
    DistilBertPreprocessor,
)
from kzoo.models.distil_bert.text_classifier import DistilBertTextClassifier
from kzoo.models.distil_bert.tokenizer import DistilBertTokenizer

__all__ = [
    "DistilBertBackbone", "DistilBertMaskedLM",
    "DistilBertMaskedLMPreprocessor", "DistilBertPreprocessor",
    "DistilBertTextClassifier", "DistilBertTokenizer", "Distiller",
    "init_student_from_teacher",
]
