"""ELMo: backbone, tokenizer, preprocessors, embedder and tasks."""

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

__all__ = [
    "ElmoBackbone", "ElmoEmbedder", "ElmoLanguageModel",
    "ElmoLanguageModelPreprocessor", "ElmoPreprocessor",
    "ElmoTextClassifier", "ElmoTokenTagger", "ElmoTokenTaggerPreprocessor",
    "ElmoTokenizer", "Perplexity",
]
