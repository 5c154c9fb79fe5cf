"""The base classes every family builds on: Backbone, Tokenizer,
Preprocessor, Task, their argument checks, the class registry and the
preset writer."""

from kzoo.core.backbone import Backbone
from kzoo.core.preprocessor import Preprocessor
from kzoo.core.task import Task
from kzoo.core.tokenizer import Tokenizer

__all__ = ["Backbone", "Preprocessor", "Task", "Tokenizer"]
