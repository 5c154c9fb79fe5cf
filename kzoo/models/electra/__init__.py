"""ELECTRA: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.electra.backbone import ElectraBackbone
from kzoo.models.electra.discriminator import ElectraDiscriminator
from kzoo.models.electra.masked_lm import ElectraMaskedLM
from kzoo.models.electra.preprocessor import (
    ElectraMaskedLMPreprocessor,
    ElectraPreprocessor,
)
from kzoo.models.electra.pretrainer import ElectraPretrainer
from kzoo.models.electra.text_classifier import ElectraTextClassifier
from kzoo.models.electra.tokenizer import ElectraTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). ELECTRA reads text with BERT's WordPiece tokenizer.
BUILDS_ON = ("bert",)

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("electra",),
    objectives=("rtd", "mlm"),
)

__all__ = [
    "ElectraBackbone", "ElectraDiscriminator", "ElectraMaskedLM",
    "ElectraMaskedLMPreprocessor", "ElectraPreprocessor",
    "ElectraPretrainer", "ElectraTextClassifier", "ElectraTokenizer",
]
