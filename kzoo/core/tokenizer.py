"""Tokenizer: text <-> token ids, wrapping a keras-hub tokenizer.

kzoo tokenizers hold a keras-hub tokenizer (WordPiece, byte-level BPE,
SentencePiece) rather than subclass it, so the preset machinery stays ours
and the text algorithm stays theirs. They run inside `tf.data` pipelines.

Asset files (vocabulary, merges) are not part of the config, as weights are
not: a config never names a path on one machine. They travel

- in presets: copied beside `tokenizer.json` by `save_to_preset`; the paths
  are passed to the constructor by `from_preset`;
- in `.keras` archives: through `save_assets` / `load_assets`, which
  Keras calls. Keras deletes the folder it extracted the archive into once
  loading is done, so `load_assets` keeps a copy of each file under
  `<kzoo cache>/assets/<sha256 of the file>/` (named by content: loading
  the same model again reuses it, and a changed file never overwrites).

A tokenizer made without its files (as `keras.saving.load_model` makes it,
before `load_assets`) raises a clear error until it gets them.
"""

import json
import os
from pathlib import Path

import keras
import tensorflow as tf

from kzoo import presets
from kzoo.core.registry import class_entry, get_class
from kzoo.core.text_tensors import (as_tf, describe, eager_outputs,
                                      text_tensor)
from kzoo.utils.files import copy_file, sha256_of, write_json
from kzoo.utils.traced import shared_traced_method


class TokenizerAssetError(ValueError):
    """A tokenizer asset file that is missing, unreadable or malformed, or
    a tokenizer used before it has its files."""


class _Unsaved:
    """Holds a value out of Keras' sight.

    Keras saves every layer it finds among a layer's attributes. Seen
    there, the keras-hub tokenizer inside a kzoo tokenizer would save its
    own copy of the vocabulary beside ours and re-read it on loading; and
    it could not be replaced once the layer is built (Keras locks a built
    layer's sublayers), which `load_assets` needs to do.
    """

    __slots__ = ("value",)

    def __init__(self):
        self.value = None


class Tokenizer(keras.layers.Layer):
    """Base class of kzoo tokenizers.

    Subclasses name their asset files in `asset_files` (constructor
    argument -> file name in a preset or archive), call
    `self.set_assets(...)` with those arguments at the end of `__init__`,
    and implement `read_assets(**paths)`, which reads and checks the files
    and returns the keras-hub tokenizer. They may override `normalize`
    (text clean-up in tf ops before the keras-hub tokenizer).

    Called eagerly, `tokenize` returns a list of id lists for a batch (a
    backend tensor for one string) and `detokenize` Python strings, as
    keras-hub does; inside `tf.data` both stay tf.

    Example:
    ```python
    tokenizer = kzoo.Tokenizer.from_preset("bert_tiny_en_uncased")
    assert isinstance(tokenizer, kzoo.BertTokenizer)
    assert tokenizer.detokenize(tokenizer(["Hello world"])) == ["hello world"]
    ```
    """

    # constructor argument holding a file path -> file name in a preset
    asset_files = {}
    # Whether graphs reuse one traced tokenize function (see tokenize_tf).
    trace_once = False
    # Whether tokens spell bytes in GPT-2's byte-level alphabet (its BPE and
    # RoBERTa's): character offsets are then read through the byte table
    # (kzoo.core.token_offsets).
    byte_level = False

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        # Strings in, ints out: no autocasting and no tensor conversion.
        # Keras' private flags, set as its own and keras-hub's preprocessing
        # layers set them (checked on Keras 3.15.1; no public way exists;
        # kzoo/utils/private_apis.py, tests/test_private_apis.py).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        self._inner = _Unsaved()
        # Built from the start: no weights, and kzoo calls `tokenize_tf`
        # rather than the layer, so Keras would never mark it built. A task
        # holding an unbuilt layer made Keras' JAX trainer run the whole
        # task eagerly before every `predict_on_batch` (and once per
        # `predict`) to "build" it: ELECTRA's test spent a third of its
        # time there.
        self.built = True

    def build(self, input_shape=None):
        # Text layers hold no weights; there is nothing to build.
        self.built = True

    # ------------------------------------------------------------------
    # Assets
    # ------------------------------------------------------------------
    def read_assets(self, **paths):
        """Read and check the asset files (argument -> `Path`); return the
        keras-hub tokenizer built from their contents."""
        raise NotImplementedError

    def set_assets(self, **paths):
        """Use these asset files (argument -> path). All None: the files
        come later (`load_assets`, as `keras.saving.load_model` does)."""
        name = type(self).__name__
        given = {a: p for a, p in paths.items() if p is not None}
        if not given:
            for argument in self.asset_files:
                setattr(self, argument, None)
            return
        missing = [a for a in self.asset_files if a not in given]
        if missing:
            raise TokenizerAssetError(
                f"{name} needs {_listing(self.asset_files)} together; got "
                f"no {_listing(missing)}.")
        resolved = {}
        for argument, path in given.items():
            filename = self.asset_files[argument]
            if not isinstance(path, (str, os.PathLike)):
                raise TokenizerAssetError(
                    f"{name}: `{argument}` must be the path of a {filename}; "
                    f"got {describe(path)}.")
            if not Path(path).is_file():
                raise TokenizerAssetError(
                    f"{name}: {argument}={os.fspath(path)!r} does not exist "
                    f"or is not a file. Pass the path of the {filename} that "
                    f"came with the checkpoint, or build the tokenizer with "
                    f"{name}.from_preset(...), which finds its files.")
            resolved[argument] = Path(path)
        try:
            inner = self.read_assets(**resolved)
        except TokenizerAssetError:
            raise
        except (OSError, UnicodeDecodeError, ValueError, KeyError,
                TypeError, tf.errors.OpError) as e:
            files = ", ".join(f"{a}={str(p)!r}" for a, p in resolved.items())
            raise TokenizerAssetError(
                f"{name} cannot read its files ({files}): "
                f"{type(e).__name__}: {e}. The file is corrupt or truncated, "
                f"or not a {'/'.join(self.asset_files.values())}; use the "
                f"files that came with the checkpoint, or {name}."
                "from_preset(...).") from e
        # New files give a new keras-hub tokenizer, hence new traces
        # (traced_tokenize_tf).
        self._inner.value = inner
        for argument, path in resolved.items():
            setattr(self, argument, str(path))

    @property
    def has_assets(self):
        return self._inner.value is not None

    def check_assets(self):
        """Raise a clear error when the tokenizer has no files yet."""
        self._hub()

    @property
    def asset_paths(self):
        """Asset argument -> the file this tokenizer reads."""
        self._hub()
        return {a: Path(getattr(self, a)) for a in self.asset_files}

    def save_assets(self, dir_path):
        # Keras calls this when saving a model to a `.keras` archive.
        for argument, path in self.asset_paths.items():
            copy_file(path, Path(dir_path) / self.asset_files[argument])

    def load_assets(self, dir_path):
        # Keras calls this after `from_config` when loading a `.keras`
        # archive, then deletes `dir_path`: keep copies that outlive it.
        kept = {}
        for argument, filename in self.asset_files.items():
            source = Path(dir_path) / filename
            if not source.is_file():
                raise TokenizerAssetError(
                    f"{type(self).__name__}: the saved model has no "
                    f"{filename} for its tokenizer (looked in {dir_path}). "
                    "The archive is incomplete; save the model again.")
            kept[argument] = _keep_copy(source)
        self.set_assets(**kept)

    def _hub(self):
        """The keras-hub tokenizer, once the asset files are known."""
        inner = self._inner.value
        if inner is None:
            name = type(self).__name__
            raise TokenizerAssetError(
                f"{name} has no {_listing(self.asset_files.values())} yet. "
                f"Build it with {name}.from_preset(...), pass the file paths "
                f"({_listing(self.asset_files)}) to its constructor, or load "
                "the model that holds it with keras.saving.load_model(...).")
        return inner

    # ------------------------------------------------------------------
    # Text <-> ids
    # ------------------------------------------------------------------
    def __call__(self, inputs, *args, **kwargs):
        # Checked here, before Keras wraps errors raised inside `call`.
        inputs = text_tensor(inputs, type(self).__name__)
        return super().__call__(inputs, *args, **kwargs)

    def call(self, inputs):
        return self.tokenize(inputs)

    def tokenize(self, inputs):
        """Text -> token ids (no special tokens added).

        Eagerly: a list of id lists for a batch of strings, a 1-D backend
        tensor for one string. In `tf.data`: a `tf.RaggedTensor` (batch) or
        a 1-D `tf.Tensor`.
        """
        texts = text_tensor(inputs, type(self).__name__)
        return eager_outputs(self.tokenize_tf(texts))

    def tokenize_tf(self, texts):
        """tf strings -> tf ids (ragged for a batch), eagerly or in a graph.
        Preprocessors call this: their pipelines stay in tf throughout.

        In a graph (`tf.data`, `tf.function`) a string or a batch of
        strings goes through one traced function, when the class sets
        `trace_once` (`traced_tokenize_tf`): every preprocessor graph
        that tokenizes (fit's and predict's, each text of a pair, each
        tokenizer loaded from the same files) would trace it again
        (byte-level BPE: ~0.1 s each; 3.5 s with keras-hub's graph).
        Subclasses implement `_tokenize_tf`.
        """
        if tf.executing_eagerly() or not self.trace_once or \
                isinstance(texts, tf.RaggedTensor) or \
                texts.shape.rank not in (0, 1):
            return self._tokenize_tf(texts)
        traced = self.traced_tokenize_tf()
        if texts.shape.rank == 0:
            return traced(texts[tf.newaxis])[0]
        return traced(texts)

    def traced_tokenize_tf(self):
        """`_tokenize_tf` as a `tf.function` of a batch of strings, traced
        once per keras-hub tokenizer and class (`kzoo.utils.traced`): the
        keras-hub tokenizer is shared among tokenizers built from equal
        files (`shared_hub_tokenizer`), so a class that sets `trace_once`
        promises that its `_tokenize_tf` graph depends on nothing but
        those files and the class itself."""
        return shared_traced_method(
            self._hub(), type(self), self, "_tokenize_tf",
            input_signature=[tf.TensorSpec([None], tf.string)])

    def _tokenize_tf(self, texts):
        """`tokenize_tf`'s work, untraced."""
        if isinstance(texts, tf.RaggedTensor):
            texts = tf.ragged.map_flat_values(self.normalize, texts)
        else:
            texts = self.normalize(texts)
        return as_tf(self._hub().tokenize(texts))

    def normalize(self, texts):
        """Clean-up before tokenizing (tf string ops); none by default."""
        return texts

    def detokenize(self, token_ids):
        """Token ids -> text: a string for one sequence, a list of strings
        for a batch (eagerly); a tf string tensor in a graph."""
        if tf.executing_eagerly():
            token_ids = self._checked_ids(token_ids)
        return eager_outputs(self._hub().detokenize(token_ids))

    def _checked_ids(self, token_ids):
        """Concrete ids as Python lists, each checked against the
        vocabulary (keras-hub would fail deep inside, or decode garbage)."""
        if isinstance(token_ids, tf.RaggedTensor):
            token_ids = token_ids.to_list()
        elif not isinstance(token_ids, (list, tuple, int)):
            token_ids = keras.ops.convert_to_numpy(token_ids).tolist()
        flat = list(_flatten(token_ids))
        size = self.vocabulary_size
        bad = next((t for t in flat if not 0 <= t < size), None)
        if bad is not None:
            raise ValueError(
                f"{type(self).__name__}.detokenize: token id {bad} is "
                f"outside the vocabulary [0, {size - 1}]. Detokenize ids "
                "made by this tokenizer.")
        return token_ids

    # ------------------------------------------------------------------
    # Vocabulary
    # ------------------------------------------------------------------
    @property
    def vocabulary_size(self):
        return int(self._hub().vocabulary_size())

    def get_vocabulary(self):
        return self._hub().get_vocabulary()

    def token_to_id(self, token):
        return int(self._hub().token_to_id(token))

    def id_to_token(self, token_id):
        return self._hub().id_to_token(int(token_id))

    def word_start_table(self):
        """NumPy bool array of length `vocabulary_size`: True where the token
        begins a word (whole-word and span masking select whole words).
        Special tokens are True."""
        raise NotImplementedError(
            f"{type(self).__name__} does not say which tokens begin a word "
            "(no word_start_table()), so it cannot mask whole words or "
            'spans; use masking="token".')

    # ------------------------------------------------------------------
    # Config and presets
    # ------------------------------------------------------------------
    def get_config(self):
        # Defined here so Keras never falls back to its automatic config,
        # which would record the asset paths given to the constructor.
        return super().get_config()

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
        # Named presets record each file's sha256: a truncated or damaged
        # copy is refused here, where the cause is known.
        records = assets.metadata.get("tokenizer") or {}
        for argument, filename in tokenizer_cls.asset_files.items():
            path = _asset_file(tokenizer_cls, assets, filename,
                               records.get(filename) or {})
            expected = (records.get(filename) or {}).get("sha256")
            if expected and sha256_of(path) != expected:
                raise TokenizerAssetError(
                    f"{tokenizer_cls.__name__}: {path} is not the "
                    f"{filename} that preset {assets.name!r} records (its "
                    "sha256 differs): the file is corrupt or truncated. "
                    "Restore it: reinstall kzoo for a named preset, or save "
                    "the preset again.")
            config[argument] = str(path)
        config.update(kwargs)
        return tokenizer_cls.from_config(config)

    def save_to_preset(self, preset_dir):
        preset_dir = Path(preset_dir)
        presets.check_destination(preset_dir)
        for argument, source in self.asset_paths.items():
            dest = preset_dir / self.asset_files[argument]
            if source.resolve() != dest.resolve():
                copy_file(source, dest)
        write_json(preset_dir / "tokenizer.json",
                   class_entry(self, self.get_config()))


def _asset_file(tokenizer_cls, preset, filename, record):
    """The path of a preset's tokenizer file: in the preset folder; or,
    for a file the preset declares `"remote"` (one that kzoo cannot ship,
    such as RoBERTa's fairseq-id `vocab.json`), where the preset's weights
    come from: the cache, else fetched and converted with them."""
    if preset.has(filename) or not record.get("remote"):
        return preset.file(filename)
    try:
        return preset.weights_file(filename)
    except presets.MissingWeightsError as e:
        raise TokenizerAssetError(
            f"{tokenizer_cls.__name__}: preset {preset.name!r} does not ship "
            f"its {filename}; it comes with the checkpoint's weights, and "
            f"none could be had.\n{e}\nThe model itself builds without it: "
            "Backbone.from_preset(..., load_weights=False).") from None


def _keep_copy(source):
    """`source` copied to `<cache>/assets/<sha256>/<name>` (once)."""
    digest = sha256_of(source)
    dest = presets.cache_dir() / "assets" / digest / source.name
    if dest.is_file() and sha256_of(dest) == digest:
        return dest
    try:
        copy_file(source, dest)
    except OSError as e:
        raise TokenizerAssetError(
            f"Cannot keep a copy of the tokenizer file {source.name} in "
            f"{dest.parent} ({e}). Set KZOO_CACHE to a writable folder.") \
            from e
    return dest


def _listing(names):
    return " and ".join(f"`{n}`" for n in names)


def _flatten(values):
    if isinstance(values, (list, tuple)):
        for value in values:
            yield from _flatten(value)
    else:
        yield int(values)


def read_json_asset(path):
    """A JSON asset file, read as UTF-8."""
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def read_lines_asset(path):
    """A line-per-entry asset file, read as keras-hub reads it (trailing
    whitespace dropped)."""
    with open(path, encoding="utf-8") as f:
        return [line.rstrip() for line in f]
