"""ALBERT: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
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

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). AlbertPretrainer is BERT's MLM + sentence-pair pretrainer
# with sentence-order prediction in place of next-sentence prediction.
BUILDS_ON = ("bert",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("albert",),
    objectives=("mlm_sop", "mlm"),
)

__all__ = [
    "AlbertBackbone", "AlbertMaskedLM", "AlbertMaskedLMPreprocessor",
    "AlbertPreprocessor", "AlbertPretrainer", "AlbertPretrainerPreprocessor",
    "AlbertTextClassifier", "AlbertTokenizer",
]
