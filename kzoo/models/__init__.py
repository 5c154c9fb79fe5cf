"""Base classes and one sub-package per model family."""

from kzoo.models.backbone import Backbone
from kzoo.models.preprocessor import Preprocessor
from kzoo.models.task import Task
from kzoo.models.tokenizer import Tokenizer

__all__ = ["Backbone", "Preprocessor", "Task", "Tokenizer"]
