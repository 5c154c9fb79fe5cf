"""Token classification (NER, POS tagging, chunking) on any encoder:
word-level labels in, word-piece alignment inside the preprocessor,
predictions back per word, entity-level scores (`kzoo.metrics`)."""

import keras
import numpy as np
import tensorflow as tf

from kzoo.core.arguments import FRACTION, Optional, describe
from kzoo.core.family import (TOKEN_CLASSIFIER, EncoderHead,
                               token_classifier_dropout, tokenizer_packing)
from kzoo.core.preprocessor import PAD_MARK, Preprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.layers.dropout import Dropout
from kzoo.tasks.task_wiring import task_inputs
from kzoo.core.text_tensors import as_tf, eager_outputs, text_tensor
from kzoo.core.tokenizer import Tokenizer
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss


class WordsPreprocessor(Preprocessor):
    """Base of the word taggers' preprocessors: `x` is words (a list of
    word lists, one list of words, or a tf string tensor, ragged or dense,
    batched or one example inside `tf.data`), `y` integer word labels (a
    negative id: no loss for that word). Checks the input, then packs it
    in `_call_batched(words, labels, sample_weight)` (ragged tf, a batch)
    -> `(x, y, sample_weight)`."""

    input_description = ("words: a list of examples, each a list of word "
                         "strings (e.g. [['Sherlock', 'Holmes', 'smiled']])")
    # The test adapters feed word lists to classes that say so.
    takes_words = True

    def text_segments(self, x):
        """Words: a list of word lists (or one word list), checked, as a
        ragged tf string tensor `(batch, words)`; a tf string tensor
        (ragged or dense) as it is."""
        if isinstance(x, tuple):
            raise ValueError(self._segments_message(len(x)))
        self._ensure_setup()
        self.check_sequence_length(1)
        return (words_tensor(x, type(self).__name__),)

    def __call__(self, x, y=None, sample_weight=None, **kwargs):
        words = self.text_segments(x)[0]
        if y is not None and not isinstance(y, (tf.Tensor, tf.RaggedTensor)):
            y = word_label_ids(words, y, type(self).__name__)
        if tf.executing_eagerly():
            return eager_outputs(self.call(words, y, sample_weight))
        # In tf.data: the graph traced once per input signature.
        return self.traced()(words, y, sample_weight)

    # A served tagger takes sentences (kzoo.core.export): strings have no
    # ragged batch in a SavedModel signature, so the words are split off
    # in the graph.
    serving_names = {1: ("sentences",)}

    def serving_inputs(self, sentences):
        """Sentences (a tf string batch) -> the model's inputs, each
        sentence's words split at whitespace (`str.split()`'s words), as
        `predict([sentence.split() for sentence in sentences])`."""
        return self(tf.strings.split(sentences))

    def call(self, x, y=None, sample_weight=None):
        # One example at a time (tf.data's map before batch): its words
        # are a vector; packed as a batch of one, then unwrapped.
        if x.shape.rank == 1:
            outputs = self.call(
                x[tf.newaxis], None if y is None else y[tf.newaxis],
                None if sample_weight is None else sample_weight[tf.newaxis])
            return tf.nest.map_structure(lambda value: value[0], outputs)
        return self._call_batched(x, y, sample_weight)

    def _call_batched(self, x, y=None, sample_weight=None):
        raise NotImplementedError


@register
class TokenClassifierPreprocessor(WordsPreprocessor):
    """Words (one list of words per example) and word labels -> the
    family's packed inputs, a label per token and a loss weight per token.

    Each word is tokenized alone, after a space (as `transformers` does
    for `is_split_into_words=True`; byte-level BPE then spells it as it
    would inside a sentence), so its first piece begins it by
    construction, whatever the tokenizer (no guess from the vocabulary is
    needed, unlike whole-word masking's `word_start_table()`, where words
    come out of running text). The pieces are packed as the tokenizer's
    family packs a text (its special tokens, its truncation): the family
    is read off the tokenizer.

    Labels (integer class ids per word; a negative id: no loss for that
    word) go on the first piece of each word, the other pieces get weight
    0 (`transformers`' -100), or, with `label_all_pieces=True`, every
    piece carries a label. With `label_names` in a tagging scheme (BIO,
    BIOES or BILOU), a word's later pieces continue its entity, as
    `transformers`' `label_all_tokens` does for BIO: "Holmes's" tagged
    B-PER becomes B-PER, I-PER, I-PER, and with BIOES, S-PER becomes
    B-PER ... E-PER (a single-piece word keeps its tag). Without
    `label_names` (or with labels outside a scheme) every piece copies its
    word's label. A `TokenClassifier` given `label_names` hands them to
    its preprocessor. Special tokens, padding and words cut off by
    `sequence_length` carry no loss.

    Args:
        tokenizer: the family's tokenizer.
        sequence_length: packed length.
        label_all_pieces: label every piece of a word, not just the first.
        label_names: the label of each class id ("O", "B-PER", ...); used
            by `label_all_pieces` to continue entities.

    Example:
    ```python
    preprocessor = kzoo.TokenClassifierPreprocessor.from_preset(
        "bert_base", sequence_length=32)
    x, y, weights = preprocessor([["Sherlock", "Holmes", "smiled"]],
                                 [[1, 2, 0]])
    assert x["token_ids"].shape == y.shape == (1, 32)
    ```
    """

    tokenizer_cls = Tokenizer

    def __init__(self, tokenizer, sequence_length=512,
                 label_all_pieces=False, label_names=None, **kwargs):
        packing_cls = tokenizer_packing(type(self).__name__, tokenizer)
        super().__init__(tokenizer, sequence_length, **kwargs)
        self.label_all_pieces = bool(label_all_pieces)
        self.label_names = None if label_names is None else [
            str(name) for name in label_names]
        self.packer_preprocessor = packing_cls(
            tokenizer, sequence_length=sequence_length)

    def special_token_count(self, num_segments):
        return self.packer_preprocessor.special_token_count(1)

    def setup(self):
        import keras_hub
        self.packer_preprocessor._ensure_setup()
        family = self.packer_preprocessor.packer

        def marks(value):
            return [PAD_MARK] * len(value) if isinstance(
                value, (list, tuple)) else PAD_MARK
        # Packs per-token side information exactly as the family packs the
        # ids (same special-token slots, same truncation), with -1 in every
        # slot that is no word piece.
        self.side_packer = keras_hub.layers.MultiSegmentPacker(
            sequence_length=self.sequence_length,
            start_value=marks(family.start_value),
            end_value=marks(family.end_value),
            sep_value=marks(family.sep_value),
            pad_value=PAD_MARK, truncate=family.truncate)

    def word_pieces(self, words):
        """`(batch, words)` ragged strings -> the packed inputs, and per
        token the example's word index (-1: no word) and whether it is
        the word's first piece."""
        if not isinstance(words, tf.RaggedTensor):
            words = tf.RaggedTensor.from_tensor(words)
        flat = words.flat_values
        pieces = self.tokenizer.tokenize_tf(tf.strings.join([" ", flat]))
        if not isinstance(pieces, tf.RaggedTensor):
            pieces = tf.RaggedTensor.from_tensor(pieces)
        pieces = tf.cast(pieces, tf.int32)
        per_word = pieces.row_lengths()
        # (Lengths read off the tensors themselves: nothing to validate,
        # and each check would add guard functions to the graph.)
        group = lambda values: tf.RaggedTensor.from_row_lengths(  # noqa
            tf.RaggedTensor.from_row_lengths(values, per_word,
                                             validate=False),
            words.row_lengths(), validate=False).merge_dims(1, 2)
        ids = group(pieces.flat_values)
        word_index = tf.repeat(
            tf.ragged.range(words.row_lengths()).flat_values, per_word)
        piece = tf.ragged.range(per_word)
        first = tf.cast(piece.flat_values == 0, tf.int64)
        last = tf.cast(piece.flat_values == tf.repeat(per_word - 1, per_word),
                       tf.int64)
        inputs = self.packer_preprocessor.pack_ids((ids,))
        # A piece's side values go through the packer as one number,
        # (word index * 2 + first) * 2 + last, and are read back: one
        # packing instead of four, one per value (each took ~0.25 s of the
        # graph's ~2 s trace). The global word index (into flat words, for labels) is
        # the example's first word's plus the word index.
        code = (word_index * 2 + first) * 2 + last
        packed, _ = as_tf(self.side_packer((group(code),)))
        word_index = packed // 4
        side = {"word_index": word_index,
                "global_index": word_index + tf.cast(
                    words.row_starts(), packed.dtype)[:, tf.newaxis],
                "first": packed // 2 % 2, "last": packed % 2}
        piece_slot = packed >= 0  # PAD_MARK elsewhere, as for each value
        return inputs, {name: tf.where(piece_slot, value, PAD_MARK)
                        for name, value in side.items()}

    def _call_batched(self, x, y=None, sample_weight=None):
        inputs, side = self.word_pieces(x)
        if y is None:
            return inputs
        if not isinstance(y, tf.RaggedTensor):
            y = tf.RaggedTensor.from_tensor(y)
        word_labels = tf.cast(y.flat_values, tf.int32)
        real = side["global_index"] >= 0
        labels = tf.gather(word_labels,
                           tf.maximum(side["global_index"], 0))
        scored = real & (labels >= 0)
        if not self.label_all_pieces:
            scored &= side["first"] > 0
        elif self.label_names:
            labels = continue_entities(labels, side["first"] > 0,
                                       side["last"] > 0, self.label_names)
        weights = tf.cast(scored, "float32")
        if sample_weight is not None:
            weights *= tf.cast(tf.reshape(sample_weight, (-1, 1)), "float32")
        labels = tf.where(scored, labels, 0)
        return inputs, labels, weights

    def get_config(self):
        config = super().get_config()
        config.update({"label_all_pieces": self.label_all_pieces,
                       "label_names": self.label_names})
        return config


# A multi-piece word's tag on its first, middle and last pieces, by the
# tag's scheme prefix (BIO, BIOES, BILOU); other prefixes (I, O) repeat.
_PIECE_PREFIXES = {"B": ("B", "I", "I"), "S": ("B", "I", "E"),
                   "E": ("I", "I", "E"), "U": ("B", "I", "L"),
                   "L": ("I", "I", "L")}


def continuation_tables(label_names):
    """Per piece position (first, middle, last), the class id each class
    id becomes on a multi-piece word; a tag whose continuation is not among
    `label_names` stays as it is."""
    index = {name: i for i, name in enumerate(label_names)}
    tables = [list(range(len(label_names))) for _ in range(3)]
    for i, name in enumerate(label_names):
        prefixes = _PIECE_PREFIXES.get(name[:1])
        if prefixes is None or name[1:2] not in ("-", "_"):
            continue
        for table, prefix in zip(tables, prefixes):
            table[i] = index.get(prefix + name[1:], i)
    return tables


def continue_entities(labels, first, last, label_names):
    """Word labels copied onto every piece -> the tags of a multi-piece
    word's pieces continue its entity (see `continuation_tables`); a
    single-piece word keeps its tag. Negative labels stay."""
    first_ids, middle_ids, last_ids = (
        tf.constant(table, tf.int32)
        for table in continuation_tables(label_names))
    safe = tf.clip_by_value(labels, 0, len(label_names) - 1)
    by_position = tf.where(
        first, tf.gather(first_ids, safe),
        tf.where(last, tf.gather(last_ids, safe),
                 tf.gather(middle_ids, safe)))
    continued = tf.where(first & last, labels, by_position)
    return tf.where(labels >= 0, continued, labels)


def words_tensor(x, owner):
    """A list of word lists (or one list of words) -> ragged tf strings,
    each example's words checked as text (`text_tensor`'s errors)."""
    if isinstance(x, (tf.Tensor, tf.RaggedTensor)):
        return text_tensor(x, owner, "x")  # refuses ids, empty batches
    is_nested = isinstance(x, (list, tuple)) and x and all(
        isinstance(e, (list, tuple)) for e in x)
    if not is_nested:
        # None, numbers, an empty batch, token ids: the shared messages.
        text_tensor(x, owner, "x")
        if isinstance(x, (list, tuple)) and all(
                isinstance(w, (str, bytes)) for w in x):
            x = [x]  # one example's words
        else:
            raise ValueError(
                f"{owner} takes words: a list of examples, each a list of "
                f"word strings (e.g. [['Sherlock', 'Holmes', 'smiled']]); "
                f"got {describe(x)}. Split raw text into words first.")
    rows = []
    for i, example in enumerate(x):
        if not isinstance(example, (list, tuple)):
            raise ValueError(
                f"{owner}: example {i} of `x` must be a list of word "
                f"strings; got {describe(example)}.")
        if example:
            text_tensor(list(example), owner, f"x[{i}]")
        rows.append([w.decode("utf-8") if isinstance(w, bytes) else w
                     for w in example])
    if any(rows):
        return tf.ragged.constant(rows, dtype=tf.string, ragged_rank=1)
    return tf.RaggedTensor.from_row_lengths(tf.constant([], tf.string),
                                            [0] * len(rows))


def word_label_ids(words, y, owner, label_names=None, num_classes=None):
    """Word labels (integer ids, or names from `label_names`) -> a ragged
    int32 tensor `(batch, words)`, checked against `words` (ragged tf
    strings): one list per example, one label per word."""
    if isinstance(y, (tf.Tensor, tf.RaggedTensor)):
        return tf.cast(y, tf.int32)  # ids already, checked in the graph
    if not isinstance(words, tf.RaggedTensor):
        words = tf.RaggedTensor.from_tensor(words)
    counts = words.row_lengths().numpy()
    if isinstance(y, np.ndarray) and y.dtype != object:
        y = y.tolist()
    if isinstance(y, (list, tuple)) and y and all(
            isinstance(v, (str, int, np.integer)) for v in y) and \
            len(counts) == 1 and len(y) == counts[0]:
        y = [y]  # one example's labels
    if not isinstance(y, (list, tuple)) or len(y) != len(counts) or not all(
            isinstance(row, (list, tuple, np.ndarray)) for row in y):
        raise ValueError(
            f"{owner}: y must hold one list of word labels per example "
            f"({len(counts)} examples), e.g. [[1, 2, 0]] for "
            f"[['Sherlock', 'Holmes', 'smiled']]; got {describe(y)}.")
    lookup = {label: i for i, label in enumerate(label_names or [])}
    rows = []
    for i, (row, count) in enumerate(zip(y, counts)):
        row = list(row)
        if len(row) != count:
            raise ValueError(
                f"{owner}: example {i} has {count} words but {len(row)} "
                f"labels; give one label per word.")
        ids = []
        for label in row:
            if isinstance(label, str):
                if label not in lookup:
                    known = label_names or \
                        "none (pass label_names, or integer labels)"
                    raise ValueError(
                        f"{owner}: unknown label {label!r} in example {i}; "
                        f"known: {known}.")
                label = lookup[label]
            if isinstance(label, bool) or not isinstance(
                    label, (int, np.integer)):
                raise ValueError(
                    f"{owner}: labels must be integer class ids or label "
                    f"names; example {i} holds {describe(label)}.")
            if num_classes is not None and label >= num_classes:
                raise ValueError(
                    f"{owner}: label {label} in example {i} is out of "
                    f"range for num_classes={num_classes}.")
            ids.append(int(label))
        rows.append(ids)
    if any(rows):
        return tf.ragged.constant(rows, dtype=tf.int32, ragged_rank=1)
    return tf.RaggedTensor.from_row_lengths(tf.constant([], tf.int32),
                                            [0] * len(rows))


class WordTagger:
    """Mixin for the word taggers' tasks (`TokenClassifier`,
    `ElmoTokenTagger`): word labels (ids, or names with `label_names`) in
    `fit`/`evaluate`, `predict_words`, `evaluate_entities`. Subclasses
    implement `word_class_ids(words)`: a batch of words (ragged tf) -> per
    example a class id per word (None: the word was cut off)."""

    # A classifier per token: its `classifier` head is not a sequence
    # classifier's (kzoo.core.head_weights keeps them apart).
    task_kind = TOKEN_CLASSIFIER

    def _make_dataset(self, x, y=None, sample_weight=None, batch_size=None,
                      shuffle=False):
        if y is not None and not isinstance(x, tf.data.Dataset) and \
                self.preprocessor is not None:
            y = self._label_ids(x, y)
        return super()._make_dataset(x, y, sample_weight, batch_size,
                                     shuffle)

    def _label_ids(self, x, y):
        return word_label_ids(words_tensor(x, type(self).__name__), y,
                              type(self).__name__, self.label_names,
                              self.num_classes)

    def predict_words(self, words, batch_size=32):
        """A label per word: label names when the task has `label_names`,
        else class ids; None for a word the sequence length cut off."""
        if self.preprocessor is None:
            raise ValueError("predict_words needs the task's preprocessor.")
        x = words_tensor(words, type(self).__name__)
        results = []
        for start in range(0, int(x.nrows()), batch_size):
            for row in self.word_class_ids(x[start:start + batch_size]):
                results.append([
                    label if label is None or not self.label_names
                    else self.label_names[label] for label in row])
        return results

    def evaluate_entities(self, words, tags, scheme=None, batch_size=32):
        """Entity-level precision, recall and F1 of `predict_words` against
        `tags` (lists of BIO/BIOES label names; needs `label_names`). A
        word cut off by the sequence length counts as "O"."""
        from kzoo.metrics import entity_scores
        if not self.label_names:
            raise ValueError("evaluate_entities needs label_names (tags "
                             "such as 'B-PER').")
        predicted = [[label or "O" for label in row]
                     for row in self.predict_words(words, batch_size)]
        return entity_scores(tags, predicted, scheme=scheme)


@register
class TokenClassifier(WordTagger, EncoderHead, Task):
    """A label per word on any encoder (BERT, RoBERTa, XLM-R, DistilBERT,
    ALBERT, ELECTRA, DeBERTa-v3): the backbone's `sequence_output` ->
    dropout -> dense(num_classes) per token, as each family's
    `*ForTokenClassification` in `transformers`.

    Fit on words and word labels (integer ids, or names when `label_names`
    is given); the preprocessor (`TokenClassifierPreprocessor`) puts each
    word's label on its first piece and the loss on those pieces only.
    `predict_words` gives a label per word; `evaluate_entities` entity-level
    precision/recall/F1 (CoNLL semantics, `kzoo.metrics.entity_scores`).

    Args:
        backbone: an encoder backbone.
        num_classes: number of labels (or None with `label_names`).
        preprocessor: a `TokenClassifierPreprocessor`, or None to feed
            input dicts (logits per token).
        dropout: before the classifier; None: the family's, as its
            `*ForTokenClassification` in `transformers` (the backbone's
            dropout, `hidden_dropout_prob`, for most; ALBERT's
            `classifier_dropout_prob`, 0.1; see
            `kzoo.core.family.token_classifier_dropout`).
        label_names: the label of each class id ("O", "B-PER", ...).
        trainable_backbone: False for linear probing: the backbone stays
            frozen, only the classifier trains.

    Example:
    ```python
    tagger = kzoo.TokenClassifier.from_preset(
        "bert_tiny_en_uncased", label_names=["O", "B-PER", "I-PER"],
        sequence_length=16, load_weights=False)
    tagger.fit([["Sherlock", "Holmes", "smiled"]],
               [["B-PER", "I-PER", "O"]], epochs=2)
    tags = tagger.predict_words([["Watson", "laughed"]])
    assert len(tags[0]) == 2   # one label per word
    ```
    """

    preprocessor_cls = TokenClassifierPreprocessor
    argument_spec = {"dropout": Optional(FRACTION)}

    def __init__(self, backbone, num_classes=None, preprocessor=None,
                 dropout=None, label_names=None, trainable_backbone=True,
                 **kwargs):
        num_classes, label_names = check_labels(num_classes, label_names,
                                            type(self).__name__)
        dropout = token_classifier_dropout(backbone) if dropout is None \
            else float(dropout)
        # === Layers ===
        dropout_layer = Dropout(
            dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        classifier = keras.layers.Dense(
            num_classes, kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="classifier")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        sequence = backbone(backbone_inputs)["sequence_output"]
        logits = classifier(dropout_layer(sequence))  # (batch, seq, classes)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_classes = num_classes
        self.dropout = dropout
        self.label_names = label_names
        if (label_names and preprocessor is not None
                and getattr(preprocessor, "label_names", "") is None):
            # Continuing entities over pieces (label_all_pieces) needs
            # the tag names.
            preprocessor.label_names = list(label_names)
        self.trainable_backbone = bool(trainable_backbone)
        backbone.trainable = self.trainable_backbone

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout,
                "label_names": self.label_names,
                "trainable_backbone": self.trainable_backbone}

    def default_compile_args(self):
        return {"optimizer": default_optimizer(learning_rate=5e-5),
                # Averaged over the labelled pieces (transformers' -100).
                "loss": token_loss(),
                "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy(
                    name="accuracy")]}

    def word_class_ids(self, words):
        """A batch of words (ragged tf) -> per example, the class id of
        each word (its first piece's argmax), None for a word the sequence
        length cut off (or that has no piece)."""
        inputs, side = self.preprocessor.word_pieces(words)
        logits = keras.ops.convert_to_numpy(self.predict_on_batch(
            {k: keras.ops.convert_to_tensor(v.numpy())
             for k, v in inputs.items()}))
        best = logits.argmax(-1)
        index = side["word_index"].numpy()
        first = side["first"].numpy() > 0
        results = []
        for row, count in enumerate(words.row_lengths().numpy()):
            labels = [None] * int(count)
            for position in np.flatnonzero(first[row] & (index[row] >= 0)):
                labels[index[row, position]] = int(best[row, position])
            results.append(labels)
        return results


def check_labels(num_classes, label_names, owner):
    """`num_classes` and `label_names` checked and made to agree:
    `(num_classes, label_names or None)`."""
    if label_names is not None:
        label_names = [str(name) for name in label_names]
        if len(set(label_names)) != len(label_names) or len(label_names) < 1:
            raise ValueError(
                f"{owner}: label_names must be distinct names, one "
                f"per class; got {label_names!r}.")
        if num_classes is not None and num_classes != len(label_names):
            raise ValueError(
                f"{owner}: num_classes={num_classes} but "
                f"{len(label_names)} label_names; give one or make them "
                f"agree.")
        num_classes = len(label_names)
    if isinstance(num_classes, bool) or not isinstance(
            num_classes, (int, np.integer)) or num_classes < 1:
        raise ValueError(
            f"{owner}: num_classes must be a positive integer (or "
            f"pass label_names); got {describe(num_classes)}.")
    return int(num_classes), label_names
