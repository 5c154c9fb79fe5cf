"""T5: backbone, tokenizer, preprocessor and the text-to-text task."""

from kzoo.models.t5.backbone import T5Backbone
from kzoo.models.t5.seq2seq_lm import T5Seq2SeqLM

__all__ = ["T5Backbone", "T5Seq2SeqLM"]
