"""SentencePiece tokenizers (keras-hub `SentencePieceTokenizer`), the
base of every family whose vocabulary is a SentencePiece model: XLM-R,
ALBERT, T5, DeBERTa-v3.

What a family adds to the SentencePiece model, and what it overrides here:

- `asset_files = {"proto": "<name>"}`: the model file's name in a preset
  or `.keras` archive. Convention: the name the family's own checkpoints
  use (`spiece.model` for ALBERT and T5, the default here;
  `sentencepiece.bpe.model` for XLM-R), so a file declared remote is
  fetched with the weights under its own name.
- `special_tokens`: tokens that a text never splits. Typed in a text each
  is its id, as in the original tokenizers (fill-mask prompts rely on it).
- `family_vocabulary(pieces)`: the family's tokens in id order, made from
  the model's pieces, when the family's ids are not the model's own
  (XLM-R: fairseq's `<s> <pad> </s> <unk>`, the pieces shifted by one,
  `<mask>` last). Model ids map to family ids by token text; family tokens
  that are no piece of the model (`<pad>`, `<mask>`) come only from
  `special_tokens` typed in a text.
- `normalize(texts)`: text clean-up in tf string ops before the model
  sees the text (XLM-R: whitespace as Hugging Face splits it).
- `trainer_options`: the `SentencePieceTrainer` options that lay a new
  model out as the family's released models are (which special pieces,
  at which ids), for `from_texts`.
"""

import contextlib
import io
import itertools
from pathlib import Path

import keras_hub
import numpy as np
import sentencepiece
import tensorflow as tf

from kzoo.core.text_tensors import as_tf
from kzoo.core.tokenizer import Tokenizer, TokenizerAssetError, _Unsaved
from kzoo.utils import private_apis

# Begins each word's first piece (SentencePiece's escaped space, U+2581).
WORD_START = "\u2581"
# Marks special tokens for splitting: a byte that no UTF-8 text holds.
_SPLIT = b"\xff"


class _Tables:
    """The family's vocabulary and the id maps, read from one model file
    (held out of Keras' sight, as the keras-hub tokenizer is)."""

    def __init__(self, vocabulary, to_family, unk_id, special_ids,
                 word_starts):
        self.vocabulary = vocabulary
        self.unk_id = unk_id  # the family id of the model's <unk>
        self.index = {}
        for i, token in enumerate(vocabulary):
            self.index.setdefault(token, i)
        self.to_family = np.asarray(to_family, "int32")  # model id -> ours
        to_piece = np.full(len(vocabulary), -1, "int32")  # ours -> model's
        to_piece[self.to_family] = np.arange(len(to_family), dtype="int32")
        self.to_piece = to_piece
        self.special_ids = special_ids  # special token -> family id
        self.word_starts = word_starts
        self.to_family_tf = tf.constant(self.to_family)
        self.to_piece_tf = tf.constant(self.to_piece)


class SentencePieceTokenizer(Tokenizer):
    """A SentencePiece model as a kzoo tokenizer.

    Used directly, the ids are the model's own and no token is special.
    Families subclass it (see the module docstring): `asset_files`,
    `special_tokens`, `family_vocabulary`, `normalize`, and the special
    ids their preprocessors read (`pad_token_id`, ...).

    Args:
        proto: path to the SentencePiece model file (a serialized
            `ModelProto`). None when the file comes later
            (`keras.saving.load_model`).

    `tokenize` adds no special tokens; runs eagerly (the `sentencepiece`
    library) and inside `tf.data` (tensorflow-text's op), with the same
    ids. `detokenize` drops ids that are no piece of the model (`<pad>`,
    `<mask>`) and control pieces (`<s>`, `</s>`), as SentencePiece does.

    Example:
    ```python
    tokenizer = SentencePieceTokenizer("tests/data/spm/botchan_en_unigram_1000.model")
    ids = tokenizer("Hello world")         # [151, 88, 21, 887]
    tokenizer.detokenize(ids)              # "Hello world"
    tokenizer.word_start_table()[ids]      # [True, False, False, True]
    ```
    """

    asset_files = {"proto": "spiece.model"}
    special_tokens = ()
    trainer_options = {}
    # What `kzoo train-tokenizer` trains for the family: a SentencePiece
    # model laid out by `trainer_options` (and `family_vocabulary`).
    vocabulary_kinds = ("sentencepiece-unigram", "sentencepiece-bpe")

    def __init__(self, proto=None, **kwargs):
        super().__init__(**kwargs)
        self._tables = _Unsaved()
        self.set_assets(proto=proto)

    @classmethod
    def from_texts(cls, texts, path, vocabulary_size=8000,
                   trainer_options=None, **kwargs):
        """Train a SentencePiece model on `texts`, laid out as the
        family's released models are (its special pieces at their ids),
        write it to `path` and return the tokenizer that reads it: the
        vocabulary of a model pretrained from scratch (a new language or
        domain).

        Args:
            texts: an iterable of strings, read once in batches (a
                generator larger than memory is fine with
                `input_sentence_size` among `trainer_options`); normalised
                as the tokenizer normalises text (ALBERT: lowercased)
                before training.
            path: where to write the model file.
            vocabulary_size: pieces of the model (family tokens that are
                no piece, such as T5's sentinels, come on top).
            trainer_options: more `sentencepiece.SentencePieceTrainer`
                options (`model_type="bpe"`, `character_coverage`, ...).
            **kwargs: the tokenizer's own arguments (ALBERT's
                `lowercase`).

        Returns:
            The tokenizer, reading the new model.
        """
        tokenizer = cls(**kwargs)

        def normalized(batch=1024):
            # In batches, as they come: `texts` may be a stream larger than
            # memory (kzoo train-tokenizer), which `input_sentence_size`
            # samples.
            iterator = iter(texts)
            while chunk := list(itertools.islice(iterator, batch)):
                for text in tokenizer.normalize(tf.constant(chunk)).numpy():
                    yield text.decode("utf-8")

        model = io.BytesIO()
        sentencepiece.SentencePieceTrainer.train(
            sentence_iterator=normalized(), model_writer=model,
            vocab_size=int(vocabulary_size), minloglevel=2,
            **{**cls.trainer_options, **(trainer_options or {})})
        Path(path).write_bytes(model.getvalue())
        tokenizer.set_assets(proto=path)
        return tokenizer

    # ------------------------------------------------------------------
    # What a family overrides
    # ------------------------------------------------------------------
    def family_vocabulary(self, pieces):
        """The family's tokens in id order, from the model's pieces (a
        list of strings in the model's id order). Raise `ValueError` when
        the model is not one of the family's. Default: the pieces."""
        return list(pieces)

    # ------------------------------------------------------------------
    # Assets
    # ------------------------------------------------------------------
    def read_assets(self, proto):
        name = type(self).__name__
        data = Path(proto).read_bytes()
        if not data:
            raise TokenizerAssetError(
                f"{name}: proto={str(proto)!r} is empty; it must be a "
                f"SentencePiece model ({self.asset_files['proto']}).")
        try:
            model = sentencepiece.SentencePieceProcessor(model_proto=data)
        except (RuntimeError, OSError) as e:
            raise ValueError(f"not a SentencePiece model ({e})") from None
        size = model.get_piece_size()
        if size == 0:
            raise ValueError("the SentencePiece model has no pieces")
        pieces = [model.id_to_piece(i) for i in range(size)]
        vocabulary = list(self.family_vocabulary(pieces))
        index = {}
        for i, token in enumerate(vocabulary):
            index.setdefault(token, i)
        missing = [t for t in self.special_tokens if t not in index]
        if missing:
            raise TokenizerAssetError(
                f"{name}: the vocabulary made from proto={str(proto)!r} "
                f"lacks the special token{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(repr, missing))}; use the family's own "
                "SentencePiece model.")
        lost = [p for p in pieces if p not in index]
        if lost:
            raise TokenizerAssetError(
                f"{name}: proto={str(proto)!r} has pieces that the "
                f"family's vocabulary lacks ({lost[:5]}); use the family's "
                "own SentencePiece model.")
        to_family = [index[p] for p in pieces]
        special = set(self.special_tokens)
        special.update(vocabulary[to_family[i]] for i in range(size)
                       if model.is_control(i) or model.is_unknown(i))
        # Built once: inside the generator it was rebuilt for every token.
        in_model = set(pieces)
        special.update(t for t in vocabulary if t not in in_model)
        word_starts = np.array([t.startswith(WORD_START) or t in special
                                for t in vocabulary], dtype=bool)
        hub = keras_hub.tokenizers.SentencePieceTokenizer(
            proto=data, dtype="int32")
        self._tables.value = _Tables(
            vocabulary, to_family, to_family[model.unk_id()],
            {t: index[t] for t in self.special_tokens}, word_starts)
        return hub

    def _read(self):
        self._hub()  # a clear error until the model file is known
        return self._tables.value

    # ------------------------------------------------------------------
    # Text -> ids
    # ------------------------------------------------------------------
    def _tokenize_tf(self, texts):
        """tf strings -> tf ids in the family's numbering (ragged for a
        batch), eagerly or in a graph; special tokens typed in the text
        kept whole."""
        tables = self._read()
        if isinstance(texts, tf.RaggedTensor):
            ids = self.tokenize_tf(texts.flat_values)
            return tf.RaggedTensor.from_nested_row_splits(
                ids, texts.nested_row_splits)
        unbatched = texts.shape.rank == 0
        batch = texts[tf.newaxis] if unbatched else texts
        ids = self._tokenize_batch(self.normalize(batch), tables)
        return ids[0] if unbatched else ids

    def _tokenize_batch(self, texts, tables):
        if not tables.special_ids:
            return self._pieces(texts, tables)
        # Each text cut around its special tokens: (batch, segments).
        marked = tf.strings.regex_replace(texts, self._special_pattern(),
                                          _SPLIT + b"\\0" + _SPLIT)
        segments = tf.strings.split(marked, sep=_SPLIT)
        flat = segments.flat_values
        special_id = tf.fill(tf.shape(flat), -1)
        for token, token_id in tables.special_ids.items():
            special_id = tf.where(tf.equal(flat, token), token_id, special_id)
        is_special = special_id >= 0
        # A special segment: its one id; any other: the model's pieces.
        pieces = self._pieces(tf.where(is_special, "", flat), tables)
        specials = tf.RaggedTensor.from_row_lengths(
            tf.boolean_mask(special_id, is_special),
            tf.cast(is_special, tf.int64))
        per_segment = tf.concat([pieces, specials], axis=1)
        return tf.RaggedTensor.from_row_splits(
            per_segment, segments.row_splits).merge_dims(1, 2)

    def _pieces(self, texts, tables):
        """A 1-D batch of texts -> the model's pieces, as family ids."""
        ids = tf.cast(as_tf(self._graph_ready_hub().tokenize(texts)),
                      tf.int32)
        return ids.with_flat_values(
            tf.gather(tables.to_family_tf, ids.flat_values))

    def _special_pattern(self):
        # Longest first: a token that begins another must not cut it.
        tokens = sorted(self.special_tokens, key=len, reverse=True)
        return "|".join(_literal(t) for t in tokens)

    # ------------------------------------------------------------------
    # Ids -> text
    # ------------------------------------------------------------------
    def detokenize(self, token_ids):
        tables = self._read()
        if tf.executing_eagerly():
            token_ids = _model_ids(self._checked_ids(token_ids),
                                   tables.to_piece)
            return self._hub().detokenize(token_ids)
        ids = token_ids
        if isinstance(ids, tf.Tensor) and ids.shape.rank == 2:
            ids = tf.RaggedTensor.from_tensor(ids)
        flat = ids.flat_values if isinstance(ids, tf.RaggedTensor) else ids
        mapped = tf.gather(tables.to_piece_tf, tf.cast(flat, tf.int32))
        if isinstance(ids, tf.RaggedTensor):
            mapped = tf.ragged.boolean_mask(ids.with_flat_values(mapped),
                                            ids.with_flat_values(mapped >= 0))
        else:
            mapped = tf.boolean_mask(mapped, mapped >= 0)
        return self._graph_ready_hub().detokenize(mapped)

    def _graph_ready_hub(self):
        """The keras-hub tokenizer; in a graph, with its tensorflow-text
        model made afresh, outside the graph.

        tensorflow-text's SentencePiece model is a resource owned by the
        kernel that made it, and TensorFlow drops its kernels whenever the
        global seed is set (`keras.utils.set_random_seed`), leaving graphs
        traced later with a model that "does not exist". Made again for
        each graph (in the eager context, as tf.data needs), it lives as
        long as the graph runs.
        """
        hub = self._hub()
        if not tf.executing_eagerly() and (
                _one_model is None or id(hub) not in _one_model):
            with tf.init_scope():
                remake_tf_model(hub)
            if _one_model is not None:
                _one_model.add(id(hub))
        return hub

    # ------------------------------------------------------------------
    # Vocabulary
    # ------------------------------------------------------------------
    @property
    def vocabulary_size(self):
        return len(self._read().vocabulary)

    def get_vocabulary(self):
        return list(self._read().vocabulary)

    def token_to_id(self, token):
        """The token's id; a token outside the vocabulary gets the
        model's unknown token's id, as SentencePiece gives."""
        tables = self._read()
        if token in tables.index:
            return tables.index[token]
        return tables.unk_id

    def id_to_token(self, token_id):
        vocabulary = self._read().vocabulary
        token_id = int(token_id)
        if not 0 <= token_id < len(vocabulary):
            raise ValueError(
                f"{type(self).__name__}.id_to_token: token id {token_id} is "
                f"outside the vocabulary [0, {len(vocabulary) - 1}].")
        return vocabulary[token_id]

    def word_start_table(self):
        """A NumPy bool array of length `vocabulary_size`: True where a
        token begins a word (a piece starting with "▁", and every special
        or control token), False for a piece that continues a word. Whole
        word masking groups each True token with the False ones after
        it."""
        return self._read().word_starts.copy()

    @property
    def special_token_ids(self):
        return [self.token_to_id(t) for t in self.special_tokens]


# Inside `one_model_per_tokenizer()`: the ids of the keras-hub tokenizers
# whose tf-text model was made afresh since it began.
_one_model = None


@contextlib.contextmanager
def one_model_per_tokenizer():
    """Within: each tokenizer makes its tf-text model afresh for the first
    graph only (see `_graph_ready_hub`), and its later graphs share it. An
    export traces several graphs into one SavedModel (TensorFlow traces
    some again as it saves), which can save only the model its archive
    tracks."""
    global _one_model
    outer, _one_model = _one_model, set()
    try:
        yield
    finally:
        _one_model = outer


def remake_tf_model(hub):
    """Make a keras-hub SentencePieceTokenizer's tensorflow-text model
    afresh (see `_graph_ready_hub`).

    `_set_proto_tf` is keras-hub's private method that makes only that
    model (checked on keras-hub 0.32.0; kzoo/utils/private_apis.py).
    Without it, the public `set_proto` makes it too, and rebuilds the
    vocabulary tables from the same proto (slower; the same tokenizer)."""
    if private_apis.has("keras-hub:SentencePieceTokenizer._set_proto_tf"):
        hub._set_proto_tf(hub.proto)
    else:
        hub.set_proto(hub.proto)


def _model_ids(ids, to_piece):
    """Family ids (an int, a list, or a list of lists) -> the model's
    ids, leaving out the family's own tokens (no piece of the model)."""
    if isinstance(ids, (list, tuple)):
        if ids and all(isinstance(row, (list, tuple)) for row in ids):
            return [_model_ids(row, to_piece) for row in ids]
        return [int(to_piece[i]) for i in ids if to_piece[i] >= 0]
    return _model_ids([ids], to_piece)


def _literal(token):
    """A regex matching `token` literally (RE2 syntax)."""
    return "".join("\\" + c if not c.isalnum() else c for c in token)
