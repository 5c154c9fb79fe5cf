"""ELMo: backbone, tokenizer, preprocessor, embedder and tasks."""

from kzoo.models.elmo.backbone import ElmoBackbone
