"""One keras-hub tokenizer per set of asset files, shared.

Building a keras-hub tokenizer costs 0.2-1 s (its vocabulary and merges
become lookup tables), and a program builds the same one many times: every
`from_preset` of a task, preprocessor or tokenizer of one preset makes its
own kzoo tokenizer. A keras-hub tokenizer does not change once built (the
byte-pair tokenizer's word cache only memoises results), so kzoo
tokenizers made from the same file contents and options share one.
"""

import collections
import threading

from kzoo.utils.files import sha256_of

# The most recently used keras-hub tokenizers, by key. A handful covers a
# program's presets; each holds its vocabulary's tables (up to ~50 MB).
_SHARED = collections.OrderedDict()
_KEPT = 8
_LOCK = threading.Lock()


def asset_key(*paths):
    """What a tokenizer built from these files depends on: their contents
    (a file rewritten in place under the same name is a new key)."""
    return tuple(sha256_of(path) for path in paths)


def shared_hub_tokenizer(key, build):
    """The keras-hub tokenizer `build()` returns, shared among equal keys.

    `key` must name everything the build depends on: the kind of
    tokenizer, the options that configure it (special tokens), and
    `asset_key(...)` of the files. Kzoo classes whose builds are the same
    (BERT, DistilBERT and ELECTRA on one vocab.txt) give equal keys.
    """
    with _LOCK:
        if key in _SHARED:
            _SHARED.move_to_end(key)
            return _SHARED[key]
    hub = build()
    with _LOCK:
        _SHARED[key] = hub
        while len(_SHARED) > _KEPT:
            _SHARED.popitem(last=False)
    return hub

