"""Masking whole words and spans of whole words (BERT's whole-word masking,
SpanBERT), in TensorFlow ops inside `tf.data`.

Both select words, never pieces of them: a word is a token that begins a
word (the tokenizer's `word_start_table()`: WordPiece tokens without "##",
byte-level BPE tokens that begin with a space, SentencePiece's "▁" pieces)
and the pieces that follow it. The first token after a special token always
begins a word. The 15% budget is counted in tokens, as for token masking
(`MaskedLMMasker`), and every piece of a word (or span) shares one 80/10/10
decision. The outputs are `MaskedLMMasker`'s, so the masked-LM task and its
loss do not change.

- `WholeWordMasker`: Google's `create_pretraining_data.py` with
  `do_whole_word_mask`: words in random order; a word is added while the
  selected tokens stay within the budget (a word that would overshoot is
  skipped, and the next one tried).
- `SpanMasker`: SpanBERT's: span lengths in words from a geometric
  distribution (p = 0.2) clipped at 10 words (the tail folded back in:
  mean 3.8 words); a span starts at an anchor word drawn with probability
  proportional to its length (SpanBERT draws an anchor token and moves to
  the start of its word) that is not masked yet, and runs over whole words
  to the right, never across a special token, stopping at the first word
  that would overshoot the budget; spans are drawn until the budget is met
  (or no word fits). Overlapping and adjacent spans merge, as SpanBERT's
  do; `span_boundaries` gives each masked token its span's boundary
  tokens, for the span boundary objective.
"""

import numpy as np
import tensorflow as tf

from kzoo.preprocessing.masking import MaskedLMMasker

SPAN_GEOMETRIC_P = 0.2
MAX_SPAN_WORDS = 10


def span_length_probabilities(p=SPAN_GEOMETRIC_P, max_words=MAX_SPAN_WORDS):
    """P(span of n words), n = 1..max_words: geometric(p) renormalised over
    1..max_words (SpanBERT's `len_distrib`).

    Example:
    ```python
    from kzoo import preprocessing
    probabilities = preprocessing.span_length_probabilities()  # SpanBERT's
    assert len(probabilities) == 10 and abs(sum(probabilities) - 1) < 1e-6
    ```
    """
    lengths = np.arange(1, max_words + 1)
    weights = p * (1 - p) ** (lengths - 1)
    return weights / weights.sum()


class WholeWordMasker(MaskedLMMasker):
    """`MaskedLMMasker` that selects whole words.

    Args (beyond `MaskedLMMasker`'s):
        word_starts: bool per token id, True where the token begins a
            word (`tokenizer.word_start_table()`).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    packer = kzoo.BertPreprocessor(tokenizer, sequence_length=16)
    token_ids = np.asarray(
        packer(["Unbelievably, the giraffes snored."])["token_ids"])
    word_starts = tokenizer.word_start_table()
    masker = preprocessing.WholeWordMasker(
        tokenizer.vocabulary_size, tokenizer.mask_token_id,
        tokenizer.special_token_ids, sequence_length=16,
        word_starts=word_starts, mask_selection_rate=0.5, seed=0)
    masked, positions, original, weights = masker(token_ids)
    picked = set(np.asarray(positions[0])[np.asarray(weights[0]) > 0])
    # A piece inside a word ("##raf" of "gi ##raf ##fe ##s") is masked
    # only with the piece before it: whole words.
    assert picked and all(p - 1 in picked for p in picked
               if not word_starts[token_ids[0, p]])
    ```
    """

    def __init__(self, vocabulary_size, mask_token_id, unselectable_token_ids,
                 sequence_length, word_starts, **kwargs):
        super().__init__(vocabulary_size, mask_token_id,
                         unselectable_token_ids, sequence_length, **kwargs)
        word_starts = np.asarray(word_starts, dtype=bool)
        if word_starts.shape != (self.vocabulary_size,):
            raise ValueError(
                f"{type(self).__name__}: word_starts must hold one bool per "
                f"token id ({self.vocabulary_size}); got shape "
                f"{word_starts.shape}. Use tokenizer.word_start_table().")
        self.word_starts = tf.constant(word_starts)

    # ------------------------------------------------------------------
    # What subclasses choose: where candidate spans start, how long
    # ------------------------------------------------------------------
    def candidate_order(self, word_lengths, num_words):
        """`(batch, words)`: the word indices in the order they are tried;
        a uniformly random order of each row's words (Google's shuffle)."""
        return _random_order(self.generator, word_lengths, num_words,
                             weighted=False)

    def span_lengths(self, shape):
        """Span lengths in words for `shape` candidates; 1: single words."""
        return tf.ones(shape, tf.int32)

    # ------------------------------------------------------------------
    def select(self, ids, selectable, budget):
        words = word_structure(ids, selectable, self.word_starts)
        word_of, word_lengths, word_segment, num_words = words
        batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
        order = self.candidate_order(word_lengths, num_words)
        spans = self.span_lengths(tf.shape(order))
        word_index = tf.range(length)[tf.newaxis, :]  # (1, words)

        def step(k, chosen, group, count):
            anchor = order[:, k]  # (batch,)
            anchor_selected = tf.gather(chosen, anchor, batch_dims=1)
            active = (anchor < num_words) & (count < budget) & \
                ~anchor_selected
            # The span: `spans[:, k]` words from the anchor, in its segment.
            in_span = active[:, tf.newaxis] & \
                (word_index >= anchor[:, tf.newaxis]) & \
                (word_index < (anchor + spans[:, k])[:, tf.newaxis]) & \
                (word_segment == tf.gather(word_segment, anchor,
                                           batch_dims=1)[:, tf.newaxis])
            new = in_span & ~chosen
            # Whole words, left to right, while the budget holds: the
            # running total only grows, so this stops at the first word
            # that would overshoot.
            total = count[:, tf.newaxis] + tf.cumsum(
                tf.where(new, word_lengths, 0), axis=1)
            added = new & (total <= budget[:, tf.newaxis])
            count += tf.reduce_sum(tf.where(added, word_lengths, 0), axis=1)
            return (k + 1, chosen | added, tf.where(added, k, group), count)

        def more(k, chosen, group, count):
            return (k < length) & tf.reduce_any(
                (count < budget) & (k < num_words))

        _, chosen, group, _ = tf.while_loop(
            more, step,
            (tf.constant(0), tf.zeros((batch, length), tf.bool),
             tf.zeros((batch, length), tf.int32), tf.zeros((batch,),
                                                           tf.int32)))
        # Words -> their tokens.
        safe_word = tf.where(selectable, word_of, 0)
        selected = selectable & tf.gather(chosen, safe_word, batch_dims=1)
        groups = tf.where(selected,
                          tf.gather(group, safe_word, batch_dims=1), 0)
        return selected, groups


class SpanMasker(WholeWordMasker):
    """`WholeWordMasker` that selects spans of whole words (SpanBERT).

    Args (beyond `WholeWordMasker`'s):
        geometric_p: parameter of the span-length distribution (0.2).
        max_span_words: longest span in words (10).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    packer = kzoo.BertPreprocessor(tokenizer, sequence_length=32)
    token_ids = packer(["It is a truth universally acknowledged, that a "
                        "single man in possession of a good fortune"])
    masker = preprocessing.SpanMasker(
        tokenizer.vocabulary_size, tokenizer.mask_token_id,
        tokenizer.special_token_ids, sequence_length=32,
        word_starts=tokenizer.word_start_table(), seed=0)
    masked, positions, original, weights = masker(
        np.asarray(token_ids["token_ids"]))
    # ceil(15% of the 17 text tokens) = 3 tokens, in spans of words.
    assert np.asarray(weights).sum() == 3
    ```
    """

    def __init__(self, *args, geometric_p=SPAN_GEOMETRIC_P,
                 max_span_words=MAX_SPAN_WORDS, **kwargs):
        super().__init__(*args, **kwargs)
        if not 0.0 < geometric_p <= 1.0:
            raise ValueError(f"geometric_p must be in (0, 1]; got "
                             f"{geometric_p}.")
        self.probabilities = span_length_probabilities(
            geometric_p, int(max_span_words))
        self.cumulative = tf.constant(
            np.cumsum(self.probabilities)[:-1], tf.float32)

    def candidate_order(self, word_lengths, num_words):
        # SpanBERT draws an anchor token, then moves to its word's start:
        # a word is drawn with probability proportional to its length.
        return _random_order(self.generator, word_lengths, num_words,
                             weighted=True)

    def span_lengths(self, shape):
        draw = self.generator.uniform(shape)
        return 1 + tf.reduce_sum(tf.cast(
            draw[..., tf.newaxis] >= self.cumulative, tf.int32), axis=-1)


def word_structure(ids, selectable, word_starts):
    """The words of each row.

    Returns `(word_of, word_lengths, word_segment, num_words)`: the word
    index of every token (`(batch, seq)`, meaningful where selectable);
    per word index (`(batch, seq)`, padded with 0): its length in tokens
    and its segment (words between the same two special tokens); and the
    number of words per row.
    """
    batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
    previous_selectable = tf.pad(selectable[:, :-1], [[0, 0], [1, 0]])
    starts = selectable & (tf.gather(word_starts, ids) | ~previous_selectable)
    word_of = tf.cumsum(tf.cast(starts, tf.int32), axis=1) - 1
    num_words = tf.reduce_sum(tf.cast(starts, tf.int32), axis=1)
    segment = tf.cumsum(tf.cast(~selectable, tf.int32), axis=1)
    # Per word: a segment id over the flattened batch (unselectable tokens
    # go to one extra bucket that is dropped).
    rows = tf.range(batch)[:, tf.newaxis]
    flat = tf.where(selectable, rows * length + word_of, batch * length)
    word_lengths = tf.math.unsorted_segment_sum(
        tf.ones_like(ids), flat, batch * length + 1)[:-1]
    start_flat = tf.where(starts, flat, batch * length)
    word_segment = tf.math.unsorted_segment_max(
        segment, start_flat, batch * length + 1)[:-1]
    return (word_of, tf.reshape(word_lengths, (batch, length)),
            tf.reshape(word_segment, (batch, length)), num_words)


def _random_order(generator, word_lengths, num_words, weighted):
    """A random order of each row's words (the padding indices last);
    `weighted`: drawn without replacement with probability proportional to
    the word's length (exponential race: smallest E / length first)."""
    shape = tf.shape(word_lengths)
    exponential = -tf.math.log(generator.uniform(shape, 1e-12, 1.0))
    scores = exponential / tf.cast(tf.maximum(word_lengths, 1), tf.float32) \
        if weighted else exponential
    real = tf.range(shape[1])[tf.newaxis, :] < num_words[:, tf.newaxis]
    scores = tf.where(real, scores, np.inf)
    return tf.argsort(scores, axis=1, stable=True)


def span_boundaries(positions, weights, sequence_length):
    """For each mask slot, its span's boundary tokens and its place in the
    span (SpanBERT's span boundary objective), from a masker's outputs.

    A span is a maximal run of selected positions (adjacent spans merge,
    as in SpanBERT). For the token at `positions` (`(batch, slots)`, the
    real ones where `weights` > 0): `left` is the last unselected position
    before it, `right` the first after it, `relative` its offset from the
    span's first token (0, 1, ...). A boundary outside the row is -1
    (left) or `sequence_length` (right); padding slots get zeros.

    Example:
    ```python
    from kzoo import preprocessing
    # Positions 2, 3, 4 masked (one span); the last slot is padding.
    left, right, relative = preprocessing.span_boundaries(
        positions=np.array([[2, 3, 4, 0]]),
        weights=np.array([[1.0, 1.0, 1.0, 0.0]]), sequence_length=8)
    assert np.asarray(left).tolist() == [[1, 1, 1, 0]]
    assert np.asarray(right).tolist() == [[5, 5, 5, 0]]
    assert np.asarray(relative).tolist() == [[0, 1, 2, 0]]
    ```
    """
    positions = tf.cast(positions, tf.int32)
    real = weights > 0
    index = tf.range(sequence_length)[tf.newaxis, tf.newaxis, :]
    here = positions[:, :, tf.newaxis]  # (batch, slots, 1)
    selected = tf.reduce_any((here == index) & real[:, :, tf.newaxis],
                             axis=1)  # (batch, seq)
    outside = ~selected[:, tf.newaxis, :]  # (batch, 1, seq)
    left = tf.reduce_max(tf.where(outside & (index < here), index, -1),
                         axis=-1)
    right = tf.reduce_min(
        tf.where(outside & (index > here), index, sequence_length), axis=-1)
    left = tf.where(real, left, 0)
    right = tf.where(real, right, 0)
    relative = tf.where(real, positions - left - 1, 0)
    return left, right, relative
