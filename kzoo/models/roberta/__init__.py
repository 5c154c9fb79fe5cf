"""RoBERTa: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.masked_lm import RobertaMaskedLM
from kzoo.models.roberta.preprocessor import (
    RobertaMaskedLMPreprocessor,
    RobertaPreprocessor,
)
from kzoo.models.roberta.text_classifier import RobertaTextClassifier
from kzoo.models.roberta.tokenizer import RobertaTokenizer

# The families whose classes this one subclasses (tests/convert/
# test_import_graph.py allows imports of these only). RoBERTa's tokenizer
# is GPT-2's byte-level BPE with fairseq's ids, and its converter reads
# BERT's checkpoint layout (the two name their encoder's tensors alike).
BUILDS_ON = ("gpt2", "bert")

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("roberta",),
    objectives=("mlm",),
)

__all__ = [
    "RobertaBackbone", "RobertaMaskedLM", "RobertaMaskedLMPreprocessor",
    "RobertaPreprocessor", "RobertaTextClassifier", "RobertaTokenizer",
]
