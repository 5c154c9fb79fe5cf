"""`Seq2SeqPreprocessor`: (input text, target text) pairs -> an
encoder-decoder's inputs, labels and weights; shared by T5 and BART.

    encoder:  [start] input [end] <pad>...            (sequence_length)
    labels:   [start] target [end] <pad>...           (target_length)
    decoder:  decoder_start, labels[:-1]              (target_length)

A family sets `tokenizer_cls`, `start_token` (None: T5 has none; BART's
`<s>`) and `decoder_start_token` (T5: `<pad>`; BART: `</s>`), both token
strings looked up in its tokenizer. Too-long texts lose their end (the
end token is kept).
"""

import warnings

import numpy as np
import tensorflow as tf

from kzoo.core.preprocessor import (PAD_MARK, Preprocessor, append_id,
                                      generated_text_ids, ragged_ids,
                                      split_padding)
from kzoo.core.text_tensors import text_tensor


class Seq2SeqPreprocessor(Preprocessor):
    """Base of the encoder-decoder preprocessors; see the module doc.

    Args:
        tokenizer: the family's tokenizer.
        sequence_length: encoder length (inputs are padded or cut to it).
        target_length: decoder length; None: `sequence_length`.

    Call with `x = (inputs, targets)`, two lists of strings; returns
    `(x, y, sample_weight)`: the backbone's four inputs, the label ids
    `(batch, target_length)` and their weights (1 at real label tokens).
    """

    min_segments = 2
    max_segments = 2
    takes_labels = False
    segments_hint = ("Pass x = (input_texts, target_texts); generate() "
                     "takes the inputs alone.")
    start_token = None
    decoder_start_token = None

    def __init__(self, tokenizer, sequence_length=512, target_length=None,
                 **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)
        # The encoder's length first: a target_length left to default
        # to it would otherwise be blamed for a too-short sequence_length.
        self.check_sequence_length(self.min_segments)
        if target_length is None:
            target_length = sequence_length
        if isinstance(target_length, bool) or not isinstance(
                target_length, (int, np.integer)) or \
                target_length < self.special_token_count(1):
            raise ValueError(
                f"{type(self).__name__}: target_length must be an integer "
                f">= {self.special_token_count(1)} (the decoder's "
                f"length, special tokens included); got {target_length!r}.")
        self.target_length = int(target_length)

    def special_token_count(self, num_segments):
        # Each text gets its end token (and the start token, if any); the
        # lengths are per text, not for the pair.
        return 1 + (self.start_token is not None)

    def setup(self):
        tokenizer = self.tokenizer
        self.end_token_id = tokenizer.end_token_id
        self.pad_token_id = tokenizer.pad_token_id
        self.start_token_id = (None if self.start_token is None
                               else tokenizer.token_to_id(self.start_token))
        self.decoder_start_token_id = tokenizer.token_to_id(
            self.decoder_start_token)

    # ------------------------------------------------------------------
    # Packing
    # ------------------------------------------------------------------
    def _pack_ids(self, ids, length):
        """Ragged ids -> `(token_ids, padding_mask)` `(batch, length)`:
        cut, framed by the special tokens, padded."""
        room = length - self.special_token_count(1)
        ids = append_id(tf.cast(ids[:, :room], "int32"), self.end_token_id)
        if self.start_token_id is not None:
            start = tf.fill(tf.stack([ids.nrows(), 1]),
                            tf.constant(self.start_token_id, "int32"))
            start = tf.RaggedTensor.from_tensor(
                start, row_splits_dtype=ids.row_splits.dtype)
            ids = tf.concat([start, ids], axis=1)
        packed = ids.to_tensor(default_value=PAD_MARK, shape=[None, length])
        return split_padding(packed, self.pad_token_id)

    def _tokenize(self, texts):
        """Ragged `(batch, None)` ids, and whether `texts` was one text
        (unbatched, inside `tf.data`)."""
        ids = self.tokenizer.tokenize_tf(texts)
        if isinstance(ids, tf.RaggedTensor):
            return ids, False
        return tf.RaggedTensor.from_tensor(ids[tf.newaxis]), True

    def call(self, x, y=None, sample_weight=None):
        inputs, targets = x
        input_ids, single = self._tokenize(inputs)
        outputs = self.pack_ids(input_ids, self._tokenize(targets)[0])
        if single:
            outputs = tf.nest.map_structure(lambda t: t[0], outputs)
        return outputs

    def pack_ids(self, input_ids, target_ids):
        """Token ids -> `(x, y, sample_weight)` (TensorFlow tensors), as
        `call` packs text: ragged `(batch, None)` input and target ids (no
        special tokens), framed, cut and padded to `sequence_length` /
        `target_length`.

        For ids made another way, inside `tf.data` too: span corruption's
        (`kzoo.preprocessing.span_corruption.SpanCorrupter`) for T5's
        pretraining, BART's noised text (`BartDenoisingPreprocessor`).
        """
        self._ensure_setup()
        token_ids, padding_mask = self._pack_ids(input_ids,
                                                 self.sequence_length)
        labels, label_mask = self._pack_ids(target_ids, self.target_length)
        batch = tf.shape(labels)[0]
        # Teacher forcing: the decoder reads the labels shifted right.
        decoder_ids = tf.concat(
            [tf.fill([batch, 1], self.decoder_start_token_id),
             labels[:, :-1]], axis=1)
        decoder_mask = tf.concat(
            [tf.ones([batch, 1], "int32"), label_mask[:, :-1]], axis=1)
        outputs = ({"encoder_token_ids": token_ids,
                    "encoder_padding_mask": padding_mask,
                    "decoder_token_ids": decoder_ids,
                    "decoder_padding_mask": decoder_mask},
                   labels, label_mask)
        return outputs

    # ------------------------------------------------------------------
    # Generation (kzoo.generation.seq2seq)
    # ------------------------------------------------------------------
    def generate_preprocess(self, texts):
        """Inputs -> encoder id lists, framed as in training (cut to
        `sequence_length`, with a warning naming both lengths)."""
        self._ensure_setup()
        texts = text_tensor(list(texts), type(self).__name__, "inputs")
        ids = self._tokenize(texts)[0]
        self._warn_if_cut(ids.row_lengths().numpy())
        return self._framed(ids).to_list()

    def generate_preprocess_tf(self, texts):
        """`generate_preprocess` in tf ops (no warning: a graph cannot
        give one): strings `(batch,)` -> ragged int32 encoder ids."""
        self._ensure_setup()
        return self._framed(self._tokenize(texts)[0])

    def _framed(self, ids):
        """Ragged ids -> ragged ids framed and cut as the encoder reads
        them."""
        token_ids, padding_mask = self._pack_ids(ids, self.sequence_length)
        return tf.RaggedTensor.from_tensor(
            token_ids, lengths=tf.reduce_sum(padding_mask, axis=1))

    def _warn_if_cut(self, token_counts):
        """Say so when an input is longer than the encoder reads: the
        model would answer about its beginning only."""
        lengths = np.asarray(token_counts) + self.special_token_count(1)
        if lengths.size and lengths.max() > self.sequence_length:
            which = int(np.argmax(lengths))
            warnings.warn(
                f"Input {which} has {int(lengths[which]):,} tokens (special "
                f"tokens included); the encoder reads "
                f"{self.sequence_length:,} (sequence_length), so it was cut "
                f"to its first {self.sequence_length:,}.", stacklevel=4)

    def generate_postprocess(self, id_lists, stop_token_ids=(),
                             strip_start=True):
        """Decoder id lists -> strings, without the decoder start token and
        the stop tokens."""
        return list(self.generate_postprocess_tf(
            ragged_ids(id_lists), stop_token_ids, strip_start))

    # Ids no text shows wherever they are (BART's framing tokens).
    def hidden_ids(self):
        return ()

    def generate_postprocess_tf(self, token_ids, stop_token_ids=(),
                                strip_start=True):
        """`generate_postprocess` in tf ops: ragged ids -> strings
        `(batch,)`. An embedding table may have rows beyond the
        tokenizer's ids (T5: 32,128 rows, 32,100 tokens); such an id has
        no text."""
        self._ensure_setup()
        start = self.decoder_start_token_id if strip_start else None
        token_ids = generated_text_ids(
            token_ids, first=start, anywhere=self.hidden_ids(),
            trailing=tuple(stop_token_ids),
            vocabulary_size=self.tokenizer.vocabulary_size)
        return self.tokenizer.detokenize(token_ids)

    def get_config(self):
        config = super().get_config()
        config["target_length"] = self.target_length
        return config
