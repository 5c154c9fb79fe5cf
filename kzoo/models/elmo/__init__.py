"""ELMo: backbone, tokenizer, preprocessors, embedder and tasks."""

from kzoo.core.families import Family
from kzoo.models.elmo.backbone import ElmoBackbone
from kzoo.models.elmo.embedder import ElmoEmbedder
from kzoo.models.elmo.language_model import (
    ElmoLanguageModel,
    ElmoLanguageModelPreprocessor,
    Perplexity,
)
from kzoo.models.elmo.preprocessor import ElmoPreprocessor
from kzoo.models.elmo.text_classifier import ElmoTextClassifier
from kzoo.models.elmo.token_tagger import (ElmoTokenTagger,
                                           ElmoTokenTaggerPreprocessor)
from kzoo.models.elmo.tokenizer import ElmoTokenizer

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    original_format="bilm-tf",  # bilm-tf: options.json + a weights .hdf5
    objectives=("bilm",),
)

__all__ = [
    "ElmoBackbone", "ElmoEmbedder", "ElmoLanguageModel",
    "ElmoLanguageModelPreprocessor", "ElmoPreprocessor",
    "ElmoTextClassifier", "ElmoTokenTagger", "ElmoTokenTaggerPreprocessor",
    "ElmoTokenizer", "Perplexity",
]
