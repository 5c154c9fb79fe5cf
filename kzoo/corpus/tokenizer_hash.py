"""One hash that names a tokenizer: what a corpus' ids mean.

Two tokenizers with the same hash give the same ids for the same text. The
hash covers the class that defines the tokenization (a subclass that only
renames it, as `ElectraTokenizer` renames `BertTokenizer`, hashes as its
parent: the same vocabulary gives the same ids), the configuration that
changes ids (not the layer's name, dtype or trainability: Keras numbers
layer names per process) and the bytes of every vocabulary/merges/model
file, so it depends neither on where a preset lives nor on what it is
called.
"""

import hashlib
import json

# Layer settings that do not change which ids a text gets.
_NOT_IDS = ("name", "dtype", "trainable")
# What a class body holds when it adds nothing but a name and a docstring.
_NAMING_ONLY = {"__doc__", "__module__", "__qualname__", "__firstlineno__",
                "__static_attributes__"}


def defining_class(tokenizer_cls):
    """The nearest class in `tokenizer_cls`' ancestry that defines
    anything (itself, unless it only renames its parent)."""
    for cls in tokenizer_cls.__mro__:
        if set(vars(cls)) - _NAMING_ONLY:
            return cls
    return tokenizer_cls


def tokenizer_hash(tokenizer):
    """The sha256 naming `tokenizer` (a kzoo Tokenizer)."""
    config = {key: value for key, value in tokenizer.get_config().items()
              if key not in _NOT_IDS}
    digest = hashlib.sha256()
    digest.update(defining_class(type(tokenizer)).__name__.encode() + b"\0")
    digest.update(json.dumps(config, sort_keys=True, default=str).encode())
    for argument, path in sorted(tokenizer.asset_paths.items()):
        digest.update(b"\0" + argument.encode() + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()
