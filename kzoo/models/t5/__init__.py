"""T5: backbone, tokenizer, preprocessor and the text-to-text task."""

from kzoo.core.families import Family
from kzoo.models.t5.backbone import T5Backbone
from kzoo.models.t5.preprocessor import T5Preprocessor
from kzoo.models.t5.seq2seq_lm import T5Seq2SeqLM
from kzoo.models.t5.tokenizer import T5Tokenizer

# What kzoo reads about the family (kzoo/core/families.py): the
# checkpoints its converter (convert.py) reads and the pretraining
# objectives that train it, the default first.
FAMILY = Family(
    model_types=("t5",),
    objectives=("span_corruption",),
)

__all__ = ["T5Backbone", "T5Preprocessor", "T5Seq2SeqLM", "T5Tokenizer"]
