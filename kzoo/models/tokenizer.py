"""Tokenizer: text <-> token ids, wrapping a keras-hub tokenizer.

kzoo tokenizers hold a keras-hub tokenizer (WordPiece, byte-level BPE,
SentencePiece) rather than subclass it, so the preset machinery stays ours
and the text algorithm stays theirs. They run inside `tf.data` pipelines.
"""

from pathlib import Path

import keras

from kzoo import presets
from kzoo.models.registry import class_entry, get_class
from kzoo.utils.files import copy_file, write_json


class Tokenizer(keras.layers.Layer):
    """Base class of kzoo tokenizers.

    Subclasses set `self.inner` (a keras-hub tokenizer) in `__init__`, name
    their asset files in `asset_files` (constructor argument -> file name),
    and define the special tokens of their family.
    """

    # constructor argument holding a file path -> file name in a preset
    asset_files = {}

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Strings in, ints out: no autocasting and no tensor conversion.
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True

    def build(self, input_shape=None):
        # Text layers hold no weights; there is nothing to build.
        self.built = True

    def call(self, inputs):
        return self.tokenize(inputs)

    def tokenize(self, inputs):
        return self.inner.tokenize(inputs)

    def detokenize(self, token_ids):
        return self.inner.detokenize(token_ids)

    @property
    def vocabulary_size(self):
        return int(self.inner.vocabulary_size())

    def get_vocabulary(self):
        return self.inner.get_vocabulary()

    def token_to_id(self, token):
        return int(self.inner.token_to_id(token))

    def id_to_token(self, token_id):
        return self.inner.id_to_token(int(token_id))

    @classmethod
    def from_config(cls, config):
        return cls(**config)

    @classmethod
    def from_preset(cls, preset, **kwargs):
        preset = presets.resolve(preset)
        entry = preset.json("tokenizer.json")
        tokenizer_cls = get_class(entry["class_name"], cls)
        config = dict(entry["config"])
        # Named presets of one family may share large assets: tokenizer.json
        # then names the sibling preset that holds them ("assets_from").
        assets = preset
        if entry.get("assets_from"):
            assets = presets.resolve(entry["assets_from"])
        for argument, filename in tokenizer_cls.asset_files.items():
            config[argument] = str(assets.file(filename))
        config.update(kwargs)
        return tokenizer_cls.from_config(config)

    def save_to_preset(self, preset_dir):
        preset_dir = Path(preset_dir)
        config = self.get_config()
        for argument, filename in self.asset_files.items():
            source = config.pop(argument)
            if Path(source).resolve() != (preset_dir / filename).resolve():
                copy_file(source, preset_dir / filename)
        write_json(preset_dir / "tokenizer.json", class_entry(self, config))

