"""DeBERTa-v3: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.deberta_v3.backbone import DebertaV3Backbone
from kzoo.models.deberta_v3.masked_lm import DebertaV3MaskedLM
from kzoo.models.deberta_v3.preprocessor import (
    DebertaV3MaskedLMPreprocessor,
    DebertaV3Preprocessor,
)
from kzoo.models.deberta_v3.text_classifier import DebertaV3TextClassifier
from kzoo.models.deberta_v3.tokenizer import DebertaV3Tokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). DeBERTa-v3's
# converter reads BERT's checkpoint layout for what the two share.
BUILDS_ON = ("bert",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    # Hugging Face names DeBERTa-v3 checkpoints deberta-v2.
    model_types=("deberta-v2",),
    objectives=("mlm",),
)

__all__ = [
    "DebertaV3Backbone", "DebertaV3MaskedLM",
    "DebertaV3MaskedLMPreprocessor", "DebertaV3Preprocessor",
    "DebertaV3TextClassifier", "DebertaV3Tokenizer",
]
