"""Preprocessor: raw text (and labels) -> the backbone's input dict.

Preprocessors run in `tf.data` (`dataset.map(preprocessor)`), whatever the
Keras backend; the model code after them is `keras.ops` only. Called
eagerly they return backend tensors, so `backbone(preprocessor(texts))`
works on every backend (see `kzoo.core.text_tensors`).
"""

import functools
import inspect
from pathlib import Path

import keras
import numpy as np
import tensorflow as tf

from kzoo import presets
from kzoo.core.family import family_text_preprocessor, preset_backbone_class
from kzoo.core.registry import class_entry, get_class
from kzoo.core.text_tensors import describe, eager_outputs, text_tensor
from kzoo.core.tokenizer import Tokenizer
from kzoo.utils.files import write_json
from kzoo.utils.traced import traced_method

# Packers pad with this id, which no tokenizer makes, so the padding mask
# can be read off the packed ids even when the padding id is also a token
# the text may hold ("[PAD]" typed in a BERT text; GPT-2's <|endoftext|>).
PAD_MARK = -1


def split_padding(packed_ids, pad_token_id):
    """Ids packed with `PAD_MARK` padding -> `(token_ids, padding_mask)`,
    both int32, the padding replaced by `pad_token_id`."""
    padding_mask = tf.not_equal(packed_ids, PAD_MARK)
    token_ids = tf.where(padding_mask, packed_ids,
                         tf.cast(pad_token_id, packed_ids.dtype))
    return tf.cast(token_ids, "int32"), tf.cast(padding_mask, "int32")


def append_id(token_ids, token_id):
    """`token_id` added at the end of every row of ids (ragged batch or one
    1-D row)."""
    token_id = tf.cast(token_id, token_ids.dtype)
    if isinstance(token_ids, tf.RaggedTensor):
        column = tf.fill(tf.stack([token_ids.nrows(), 1]), token_id)
        column = tf.RaggedTensor.from_tensor(
            column, row_splits_dtype=token_ids.row_splits.dtype)
        return tf.concat([token_ids, column], axis=1)
    return tf.concat([token_ids, token_id[tf.newaxis]], axis=0)


def ragged_ids(id_lists):
    """Lists of token ids (or 1-D arrays) -> a ragged int32 tf tensor."""
    return tf.ragged.constant(
        [[int(t) for t in np.asarray(ids).reshape(-1)] for ids in id_lists],
        dtype="int32", ragged_rank=1)


def generated_text_ids(token_ids, first=None, trailing=(), anywhere=(),
                       vocabulary_size=None):
    """Generated ids (ragged `(batch, None)`) -> the ids whose text a user
    reads, ragged int32, in tf ops (`generate`'s text and an exported
    generator's graph both run this): a leading `first` dropped, ids in
    `anywhere` dropped wherever they are, then a row's trailing run of
    `trailing` ids (its stop tokens), then ids past `vocabulary_size`
    (embedding rows the tokenizer has no text for). Worked out on the
    padded rows and cut once: ragged ops build large graphs."""
    rows = tf.cast(token_ids.to_tensor(default_value=-1), "int32")
    positions = tf.range(tf.shape(rows)[1])[tf.newaxis]
    keep = tf.sequence_mask(token_ids.row_lengths(), tf.shape(rows)[1])

    def any_of(ids):
        return tf.reduce_any(tf.equal(
            rows[..., tf.newaxis], tf.constant(list(ids), "int32")), -1)

    if first is not None:
        keep &= ~(tf.equal(positions, 0) & tf.equal(rows, int(first)))
    if anywhere:
        keep &= ~any_of(anywhere)
    if trailing:
        # Kept up to the row's last kept id that is not a stop token.
        last = tf.reduce_max(tf.where(keep & ~any_of(trailing),
                                      positions + 1, 0), axis=1)
        keep &= positions < last[:, tf.newaxis]
    if vocabulary_size is not None:
        keep &= rows < int(vocabulary_size)
    return tf.ragged.boolean_mask(rows, keep)


class Preprocessor(keras.layers.Layer):
    """Base class: holds a tokenizer; `call(x, y=None, sample_weight=None)`
    returns `(x, y, sample_weight)` packed the way `fit` expects.

    What the base class does for every family:

    - checks its arguments before any work: the tokenizer's class and
      `sequence_length` when constructed (including the room the special
      tokens need, `special_token_count`), and on every call the text `x`
      and the number of texts per example (`min_segments`..`max_segments`);
    - makes the state that depends on the tokenizer's vocabulary (packers,
      special ids, maskers) in `setup()`, on first use rather than in
      `__init__`: a preprocessor rebuilt by `keras.saving.load_model` gets
      its tokenizer's files only after it is constructed;
    - returns backend tensors when called eagerly, tf inside `tf.data`.

    Subclasses implement `setup()` and either `_pack(x)` (texts -> the
    backbone's input dict; labels pass through) or, where they make labels
    of their own, `call()`. They get their texts from
    `self.text_segments(x)` and token ids from
    `self.tokenizer.tokenize_tf(...)`, so their pipeline is tf throughout.

    Example:
    ```python
    # Each family's preprocessor: raw strings (or pairs) in, the backbone's
    # input dict out, in tf.data or eagerly.
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_tiny_en_uncased",
                                                     sequence_length=8)
    assert isinstance(preprocessor, kzoo.Preprocessor)
    x = preprocessor(["Hello world"])
    assert x["token_ids"].shape == (1, 8)
    ```
    """

    tokenizer_cls = Tokenizer
    # Texts per example: 1, or up to 2 for sentence pairs.
    min_segments = 1
    max_segments = 1
    # Added to the error for a wrong number of texts per example.
    segments_hint = ""
    # What x is, in words, for inputs that are not plain texts (a token
    # classifier's word lists); None: said from min/max_segments.
    input_description = None
    # False: the preprocessor makes its own labels and refuses any.
    takes_labels = True
    # True: each call draws anew (masked LM: fresh masks every epoch), so
    # `fit` runs it on every batch of every epoch. False: the same text
    # always gives the same outputs, and a task preprocesses in-memory
    # text once per `fit`/`predict` (`preprocess_once`).
    draws_per_call = False

    def __init__(self, tokenizer, sequence_length, num_texts=None, **kwargs):
        super().__init__(**kwargs)
        name = type(self).__name__
        if num_texts is not None:
            self._check_num_texts(num_texts)
        if not isinstance(tokenizer, self.tokenizer_cls):
            raise ValueError(
                f"{name} needs a {self.tokenizer_cls.__name__} as its "
                f"tokenizer; got {describe(tokenizer)}. Build both from one "
                f"preset: {name}.from_preset(...).")
        if isinstance(sequence_length, bool) or not isinstance(
                sequence_length, (int, np.integer)) or sequence_length < 1:
            raise ValueError(
                f"{name}: sequence_length must be a positive integer (the "
                f"length of every packed example); got "
                f"{describe(sequence_length)}.")
        self.tokenizer = tokenizer
        self.sequence_length = int(sequence_length)
        # Texts per example of the last input read (fit, evaluate,
        # predict), where the preprocessor takes a choice of them: an
        # exported model's raw-text endpoint takes as many (a pair
        # classifier serves pairs). In the config, so presets and .keras
        # files remember it.
        self.num_texts = None if num_texts is None else int(num_texts)
        # Strings in: Keras' private flags, as in `Tokenizer.__init__`
        # (kzoo/utils/private_apis.py).
        self._convert_input_args = False
        self._allow_non_tensor_positional_args = True
        # Built from the start, as `Tokenizer` is: no weights, and its
        # vocabulary-dependent state comes from `_ensure_setup` on first
        # use, not from Keras' build. A task holding an unbuilt layer makes
        # Keras' JAX trainer run the whole task eagerly before every
        # `predict_on_batch` (and once per `predict`) "to build it": on a
        # task loaded with `keras.saving.load_model`, one XLA compile per
        # eager op.
        self._set_up = False
        self.built = True

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        if "__init__" in cls.__dict__:
            cls.__init__ = _check_after_init(cls.__init__)

    # ------------------------------------------------------------------
    # What subclasses declare
    # ------------------------------------------------------------------
    def special_token_count(self, num_segments):
        """Positions the special tokens always take in an example of
        `num_segments` texts; `sequence_length` must leave room for them
        (a packer would otherwise return longer rows than asked)."""
        return 0

    def setup(self):
        """Make what depends on the tokenizer's vocabulary (packers, special
        ids, maskers). Runs once, on first use."""

    # ------------------------------------------------------------------
    # Checks, run by the base class
    # ------------------------------------------------------------------
    def check_sequence_length(self, num_segments):
        needed = self.special_token_count(num_segments)
        if self.sequence_length < needed:
            texts = "one text" if num_segments == 1 else \
                f"{num_segments} texts"
            raise ValueError(
                f"{type(self).__name__}: sequence_length="
                f"{self.sequence_length} is too short: the special tokens of "
                f"{texts} take {needed} positions, and the packed example "
                f"would come out longer than asked. Use sequence_length >= "
                f"{needed}.")

    def text_segments(self, x):
        """`x` checked, as a tuple of tf string tensors (one per text of an
        example). `x` is a string, a list of strings (one text per example)
        or a tuple of such lists (several texts per example); a lone string
        is a batch of one."""
        name = type(self).__name__
        parts = x if isinstance(x, tuple) else (x,)
        if not self.min_segments <= len(parts) <= self.max_segments:
            raise ValueError(self._segments_message(len(parts)))
        segments = []
        for i, part in enumerate(parts):
            argument = f"x[{i}]" if isinstance(x, tuple) else "x"
            if isinstance(part, (str, bytes)):
                part = [part]
            segments.append(text_tensor(part, name, argument))
        if tf.executing_eagerly() and len(segments) > 1:
            sizes = [_batch_size(s) for s in segments]
            if len(set(sizes)) > 1:
                raise ValueError(
                    f"{name}: the texts of x must come in equal numbers (one "
                    f"of each per example); got batches of {sizes}.")
        self._ensure_setup()
        self.check_sequence_length(len(segments))
        if self.min_segments < self.max_segments:
            self.num_texts = len(segments)
        return tuple(segments)

    def _segments_message(self, count):
        low, high = self.min_segments, self.max_segments
        if self.input_description:
            wanted = self.input_description
        elif low == high == 1:
            wanted = "one text per example: a string or a list of strings"
        elif low == high == 2:
            wanted = ("sentence pairs: x = (first_texts, second_texts), a "
                      "tuple of two lists")
        else:
            wanted = (f"{low} to {high} texts per example: a list of "
                      "strings, or a tuple of lists, x = (first_texts, "
                      "second_texts)")
        got = "a tuple of none" if count == 0 else (
            "one text per example" if count == 1
            else f"{count} texts per example")
        return " ".join(filter(None, [
            f"{type(self).__name__} takes {wanted}; got {got}.",
            self.segments_hint]))

    # ------------------------------------------------------------------
    # Calling
    # ------------------------------------------------------------------
    def __call__(self, x, y=None, sample_weight=None, **kwargs):
        segments = self.text_segments(x)
        x = segments if isinstance(x, tuple) else segments[0]
        self.refuse_labels(y, sample_weight)
        if not tf.executing_eagerly() and not kwargs:
            return self.traced()(x, _array(y), _array(sample_weight))
        outputs = super().__call__(x, _array(y), _array(sample_weight),
                                   **kwargs)
        return eager_outputs(outputs)

    def refuse_labels(self, y, sample_weight):
        if not self.takes_labels and (y is not None or
                                      sample_weight is not None):
            raise ValueError(
                f"{type(self).__name__} makes its own labels and weights; "
                "pass texts only (got y or sample_weight).")

    def traced(self, method="__call__"):
        """This preprocessor's graph (its layer call, or the method named:
        "prepare", "draw"), traced once per input signature.

        Every `fit`/`evaluate`/`predict` on raw text maps the preprocessor
        over a new `tf.data` pipeline, and tf.data traces its function
        anew each time: for byte-level BPE that rebuilt thousands of graph
        ops per call (seconds each). A `tf.function` keeps the traced
        graph, so a new pipeline adds one call to it. (Kept outside the
        layer's attributes: see `kzoo.utils.traced`.)
        """
        if method == "__call__":  # Keras' call (builds first)
            method = "_layer_call"
        else:
            self._ensure_setup()
        return traced_method(self, method, reduce_retracing=True)

    def _layer_call(self, *args):
        return super().__call__(*args)

    # ------------------------------------------------------------------
    # Serving: raw strings in a SavedModel (kzoo.core.export)
    # ------------------------------------------------------------------
    # The names of a served model's string inputs, by texts per example;
    # a subclass whose texts have roles names them (questions, contexts).
    serving_names = {1: ("texts",), 2: ("first_texts", "second_texts")}

    def serving_text_names(self, num_texts=None):
        """The string inputs of an exported model's raw-text endpoint:
        one name per text of an example (`num_texts`; by default as many
        as the preprocessor last read, e.g. pairs for a model trained on
        pairs, else `min_segments`)."""
        if num_texts is None:
            num_texts = self.num_texts or self.min_segments
        self._check_num_texts(num_texts)
        return tuple(self.serving_names[num_texts])

    def _check_num_texts(self, num_texts):
        if isinstance(num_texts, bool) or \
                not isinstance(num_texts, (int, np.integer)) or \
                not self.min_segments <= num_texts <= self.max_segments:
            raise ValueError(
                f"{type(self).__name__}: num_texts must be an integer "
                f"from {self.min_segments} to {self.max_segments} (texts "
                f"per example); got {describe(num_texts)}.")

    def serving_inputs(self, *texts):
        """Batches of strings (tf, one per text of an example) -> the
        model's input dict, in tf ops, as `predict` packs them."""
        x = texts[0] if len(texts) == 1 else tuple(texts)
        outputs = self(x)
        return outputs[0] if isinstance(outputs, tuple) else outputs

    # ------------------------------------------------------------------
    # Epochs: what a task may run once, and what it runs on every batch
    # ------------------------------------------------------------------
    def prepare(self, x, y=None, sample_weight=None):
        """The part of `call` that gives the same outputs for the same
        text (tokenizing, packing), which a task runs once over in-memory
        text (`kzoo.core.input_pipeline.preprocess_once`). Default: all of
        it."""
        return self.call(x, y, sample_weight)

    def draw(self, *prepared):
        """The rest of `call`, drawn afresh on every batch of every epoch,
        on `prepare`'s outputs (only when `draws_per_call`: masking)."""
        raise NotImplementedError(
            f"{type(self).__name__} draws nothing per call.")

    def call(self, x, y=None, sample_weight=None):
        return keras.utils.pack_x_y_sample_weight(self._pack(x), y,
                                                  sample_weight)

    def _pack(self, x):
        """Texts -> the backbone's input dict (tf tensors)."""
        raise NotImplementedError(
            f"{type(self).__name__} implements neither _pack nor call.")

    @tf.autograph.experimental.do_not_convert
    def _ensure_setup(self):
        """Makes the state that depends on the vocabulary (`setup`), once:
        on the first call, or before a method used outside it. Inside a
        tf.data trace, init_scope makes the state eagerly (a masker's
        random generator must not belong to the traced graph), and
        autograph must keep out: it would rewrite the layers'
        constructors."""
        if self._set_up:
            return
        with tf.init_scope():
            self.tokenizer.check_assets()
            self.setup()
        self._set_up = True

    def get_build_config(self):
        # Nothing to rebuild from shapes: `setup` runs on first use, once a
        # loaded model has handed the tokenizer its files.
        return None

    # ------------------------------------------------------------------
    # Config and presets
    # ------------------------------------------------------------------
    def get_config(self):
        config = super().get_config()
        config.update({
            "sequence_length": self.sequence_length,
            # The tokenizer's config (never its files' paths), so the layer
            # deserializes on its own; presets keep it in tokenizer.json.
            "tokenizer": class_entry(self.tokenizer,
                                     self.tokenizer.get_config()),
        })
        if self.num_texts is not None:
            config["num_texts"] = self.num_texts
        return config

    @classmethod
    def from_config(cls, config, tokenizer=None):
        config = dict(config)
        entry = config.pop("tokenizer", None)
        if tokenizer is None:
            if entry is None:
                raise ValueError(
                    f"{cls.__name__}.from_config needs a tokenizer: pass "
                    "tokenizer=..., or a config from get_config(), which "
                    "holds one.")
            tokenizer = get_class(entry["class_name"], Tokenizer) \
                .from_config(entry["config"])
        return cls(tokenizer=tokenizer, **config)

    @classmethod
    def from_preset(cls, preset, **kwargs):
        """The preprocessor for a preset; kwargs override its config
        (e.g. `sequence_length=128`). On the base class, the preset's own:
        the saved preprocessor's class, else its family's text
        preprocessor (`BertPreprocessor`, ...)."""
        preset = presets.resolve(preset)
        if cls is Preprocessor:
            return cls._family_class(preset).from_preset(preset, **kwargs)
        tokenizer = cls.tokenizer_cls.from_preset(preset)
        config = {}
        if preset.has("preprocessor.json"):
            entry = preset.json("preprocessor.json")
            saved_cls = get_class(entry["class_name"], Preprocessor)
            # A task preprocessor keeps its own class; shared fields carry.
            if issubclass(cls, saved_cls):
                config = dict(entry["config"])
            elif issubclass(saved_cls, cls):
                # A more specific one was saved (a masked LM's, after
                # pretraining): only what `cls` takes carries (not the
                # masking rates a text classifier has no use for).
                accepted = _init_arguments(cls)
                config = {k: v for k, v in entry["config"].items()
                          if k in accepted}
            else:
                config = {k: v for k, v in entry["config"].items()
                          if k in ("sequence_length",)}
        config.pop("name", None)
        config.pop("tokenizer", None)
        config.update(kwargs)
        if preset.has("config.json"):
            # The preset knows its backbone's position table: a longer
            # sequence_length would fail only later, inside the model.
            preset_backbone_class(preset).check_preset_sequence_length(
                preset, config.get("sequence_length"), cls.__name__)
        return cls.from_config(config, tokenizer=tokenizer)

    @staticmethod
    def _family_class(preset):
        if preset.has("preprocessor.json"):
            return get_class(preset.json("preprocessor.json")["class_name"],
                             Preprocessor)
        backbone_cls = preset_backbone_class(preset)
        found = family_text_preprocessor(backbone_cls)
        if found is None:
            raise presets.PresetError(
                f"Preset {preset.name!r} holds a {backbone_cls.__name__}, "
                "whose family has no plain text preprocessor: load a task's "
                "preprocessor (e.g. `T5Preprocessor.from_preset(...)`).")
        return found

    def save_to_preset(self, preset_dir):
        preset_dir = Path(preset_dir)
        presets.check_destination(preset_dir)
        self.tokenizer.save_to_preset(preset_dir)
        config = self.get_config()
        config.pop("tokenizer")  # it has its own file, tokenizer.json
        write_json(preset_dir / "preprocessor.json",
                   class_entry(self, config))


def _init_arguments(cls):
    """The argument names the `__init__`s of `cls`' ancestry accept by
    name (each passes the rest on as **kwargs)."""
    names = set()
    for klass in cls.__mro__:
        init = vars(klass).get("__init__")
        if init is None:
            continue
        init = getattr(init, "__wrapped__", init)
        for parameter in inspect.signature(init).parameters.values():
            if parameter.kind in (parameter.POSITIONAL_OR_KEYWORD,
                                  parameter.KEYWORD_ONLY):
                names.add(parameter.name)
    names.discard("self")
    return names


def _check_after_init(init):
    """Wrap a subclass `__init__` so the finished preprocessor checks its
    `sequence_length` once, after the outermost `__init__`: only then is
    every attribute the check reads (e.g. `add_start_token`) set."""

    @functools.wraps(init)
    def checked_init(self, *args, **kwargs):
        init(self, *args, **kwargs)
        if type(self).__init__ is checked_init:
            self.check_sequence_length(self.min_segments)

    # Keras reads constructor arguments off the signature (for its
    # automatic configs); give it the real one, not (*args, **kwargs).
    checked_init.__signature__ = inspect.signature(init)
    return checked_init


def _batch_size(texts):
    if isinstance(texts, tf.RaggedTensor):
        return int(texts.nrows())
    return int(texts.shape[0]) if texts.shape.rank else None


def _array(values):
    """Labels or weights given as Python lists -> numpy (keras.tree would
    take a list for a structure, not for values)."""
    if isinstance(values, list):
        return np.asarray(values)
    return values
