"""Preprocessor: raw text (and labels) -> the backbone's input dict.

Preprocessors run in `tf.data` (`dataset.map(preprocessor)`), whatever the
Keras backend; the model code after them is `keras.ops` only.
"""

from pathlib import Path

import keras
import tensorflow as tf

from kzoo import presets
from kzoo.models.registry import class_entry, get_class
from kzoo.models.tokenizer import Tokenizer
from kzoo.utils.files import write_json


def to_string_tensor(x):
    """Lists/arrays of Python strings become a tf string tensor."""
    if isinstance(x, str):
        x = [x]
    if not tf.is_tensor(x):
        x = tf.convert_to_tensor(x, dtype=tf.string)
    return x


def _to_numpy(x):
    return x.numpy() if tf.is_tensor(x) else x


class Preprocessor(keras.layers.Layer):
    """Base class: holds a tokenizer; `call(x, y=None, sample_weight=None)`
    returns `(x, y, sample_weight)` packed the way `fit` expects."""

    tokenizer_cls = Tokenizer

    def __init__(self, tokenizer, **kwargs):
        super().__init__(**kwargs)
        self.tokenizer = tokenizer
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True

    def build(self, input_shape=None):
        # Text layers hold no weights; there is nothing to build.
        self.built = True

    def __call__(self, *args, **kwargs):
        outputs = super().__call__(*args, **kwargs)
        if tf.executing_eagerly() and keras.backend.backend() != "tensorflow":
            # Called eagerly (not in tf.data) on jax/torch: hand back numpy,
            # which every backend accepts.
            outputs = keras.tree.map_structure(_to_numpy, outputs)
        return outputs

    def get_config(self):
        # The tokenizer is saved beside the preprocessor, not inside it.
        return super().get_config()

    @classmethod
    def from_config(cls, config, tokenizer=None):
        return cls(tokenizer=tokenizer, **config)

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """The preprocessor for a preset; kwargs override its config
        (e.g. `sequence_length=128`)."""
        preset = presets.resolve(preset)
        tokenizer = cls.tokenizer_cls.from_preset(preset)
        config = {}
        if preset.has("preprocessor.json"):
            entry = preset.json("preprocessor.json")
            saved_cls = get_class(entry["class_name"], Preprocessor)
            # A task preprocessor keeps its own class; shared fields carry.
            if issubclass(cls, saved_cls) or issubclass(saved_cls, cls):
                config = dict(entry["config"])
            else:
                config = {k: v for k, v in entry["config"].items()
                          if k in ("sequence_length",)}
        config.pop("name", None)
        config.update(kwargs)
        return cls.from_config(config, tokenizer=tokenizer)

    def save_to_preset(self, preset_dir):
        preset_dir = Path(preset_dir)
        self.tokenizer.save_to_preset(preset_dir)
        write_json(preset_dir / "preprocessor.json",
                   class_entry(self, self.get_config()))
