"""GPT-2: backbone, tokenizer, preprocessors and tasks."""

from kzoo.core.families import Family
from kzoo.models.gpt2.backbone import GPT2Backbone
from kzoo.models.gpt2.causal_lm import GPT2CausalLM
from kzoo.models.gpt2.classifier import GPT2Classifier
from kzoo.models.gpt2.preprocessor import (
    GPT2CausalLMPreprocessor,
    GPT2Preprocessor,
)
from kzoo.models.gpt2.tokenizer import GPT2Tokenizer

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("gpt2",),
    objectives=("causal_lm",),
)

__all__ = [
    "GPT2Backbone", "GPT2CausalLM", "GPT2CausalLMPreprocessor",
    "GPT2Classifier", "GPT2Preprocessor", "GPT2Tokenizer",
]
