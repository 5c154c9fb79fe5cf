"""DistilBERT: backbone, tokenizer, preprocessors, tasks and the
distiller that trains a student from a teacher."""

from kzoo.core.families import Family
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

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). DistilBERT reads text with BERT's WordPiece tokenizer, and its
# distiller starts a student from a BERT teacher's weights.
BUILDS_ON = ("bert",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("distilbert",),
    objectives=("mlm",),
)

__all__ = [
    "DistilBertBackbone", "DistilBertMaskedLM",
    "DistilBertMaskedLMPreprocessor", "DistilBertPreprocessor",
    "DistilBertTextClassifier", "DistilBertTokenizer", "Distiller",
    "init_student_from_teacher",
]
