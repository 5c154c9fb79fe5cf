"""ELECTRA: backbone, tokenizer, preprocessors and tasks."""

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

__all__ = [
    "ElectraBackbone", "ElectraDiscriminator", "ElectraMaskedLM",
    "ElectraMaskedLMPreprocessor", "ElectraPreprocessor",
    "ElectraPretrainer", "ElectraTextClassifier", "ElectraTokenizer",
]
