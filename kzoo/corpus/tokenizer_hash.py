"""One hash that names a tokenizer: what a corpus' ids mean.

Two tokenizers with the same hash give the same ids for the same text. The
hash covers the class, the configuration that changes ids (not the layer's
name, dtype or trainability: Keras numbers layer names per process) and
the bytes of every vocabulary/merges/model file, so it depends neither on
where a preset lives nor on what it is called.
"""

import hashlib
import json

# Layer settings that do not change which ids a text gets.
_NOT_IDS = ("name", "dtype", "trainable")


def tokenizer_hash(tokenizer):
    """The sha256 naming `tokenizer` (a kzoo Tokenizer)."""
    config = {key: value for key, value in tokenizer.get_config().items()
              if key not in _NOT_IDS}
    digest = hashlib.sha256()
    digest.update(type(tokenizer).__name__.encode() + b"\0")
    digest.update(json.dumps(config, sort_keys=True, default=str).encode())
    for argument, path in sorted(tokenizer.asset_paths.items()):
        digest.update(b"\0" + argument.encode() + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(1 << 20):
                digest.update(chunk)
    return digest.hexdigest()
