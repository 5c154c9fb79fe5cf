"""Masking whole words, n-grams and spans of whole words (BERT's whole-word
masking, ALBERT's n-gram masking, SpanBERT), in TensorFlow ops inside
`tf.data`.

All three select words, never pieces of them (but for SpanBERT's last
span, below): a word is a token that begins a word (the tokenizer's
`word_start_table()`: WordPiece tokens without "##", byte-level BPE tokens
that begin with a space, SentencePiece's "▁" pieces) and the pieces that
follow it. The first token after a special token always begins a word.
The 15% budget is counted in tokens, as for token masking
(`MaskedLMMasker`). The outputs are `MaskedLMMasker`'s, so the masked-LM
task and its loss do not change. Each masker follows its original in
three choices: the order in which candidates start (`candidate_order`),
how many words a candidate covers (`span_lengths`), and how it meets the
budget and the words masked before it (`fit_span`):

- `WholeWordMasker`: Google's `create_pretraining_data.py` with
  `do_whole_word_mask`: words in random order; a word is added while the
  selected tokens stay within the budget (a word that would overshoot is
  skipped, and the next one tried).
- `NgramMasker`: ALBERT's `create_pretraining_data.py`: n-grams of
  n = 1..3 whole words, p(n) proportional to 1/n, starting at the words in
  random order; an n-gram that would overshoot the budget is shortened
  (n - 1, ..., 1 words), and skipped if even its first word overshoots or
  if any of its words is masked already.
- `SpanMasker`: SpanBERT's: span lengths in words from a geometric
  distribution (p = 0.2) clipped at 10 words (the tail folded back in:
  mean 3.8 words); a span starts at an anchor word drawn with probability
  proportional to its length (SpanBERT draws an anchor token and moves to
  the start of its word) that is not masked yet, and runs over whole words
  to the right, never across a special token. Spans are drawn until the
  budget is met exactly: as SpanBERT adds a span token by token, the span
  that reaches the budget stops there, inside a word if need be.
  Overlapping and adjacent spans merge, as SpanBERT's do;
  `span_boundaries` gives each masked token its span's boundary tokens,
  for the span boundary objective.

The 80/10/10 decision is each original's: per piece for whole words and
n-grams (Google's and ALBERT's code decide per WordPiece: whole-word
masking changes what is selected, not how), and once per merged span for
SpanBERT (its paper's `replacement_method="span"`). `shared_replacement`
switches either way.
"""

import numpy as np
import tensorflow as tf

from kzoo.preprocessing.masking import MaskedLMMasker

SPAN_GEOMETRIC_P = 0.2
MAX_SPAN_WORDS = 10
MAX_NGRAM = 3  # ALBERT's `ngram` flag


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


def ngram_length_probabilities(max_ngram=MAX_NGRAM):
    """P(n-gram of n words), n = 1..max_ngram: proportional to 1/n
    (ALBERT's `pvals` with `favor_shorter_ngram`).

    Example:
    ```python
    from kzoo import preprocessing
    probabilities = preprocessing.ngram_length_probabilities()  # ALBERT's
    np.testing.assert_allclose(probabilities, [6 / 11, 3 / 11, 2 / 11])
    ```
    """
    if isinstance(max_ngram, bool) or int(max_ngram) != max_ngram or \
            max_ngram < 1:
        raise ValueError(f"max_ngram must be a positive integer; got "
                         f"{max_ngram!r}.")
    weights = 1.0 / np.arange(1, int(max_ngram) + 1)
    return weights / weights.sum()


class WholeWordMasker(MaskedLMMasker):
    """`MaskedLMMasker` that selects whole words (Google's whole-word
    masking).

    Args (beyond `MaskedLMMasker`'s):
        word_starts: bool per token id, True where the token begins a
            word (`tokenizer.word_start_table()`).
        shared_replacement: one 80/10/10 decision for every piece of a
            chosen word (of an n-gram with `NgramMasker`, of a merged span
            with `SpanMasker`) instead of one per piece. Default False,
            as Google's code (and ALBERT's) decides per WordPiece.

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
                 sequence_length, word_starts, shared_replacement=False,
                 **kwargs):
        super().__init__(vocabulary_size, mask_token_id,
                         unselectable_token_ids, sequence_length, **kwargs)
        word_starts = np.asarray(word_starts, dtype=bool)
        if word_starts.shape != (self.vocabulary_size,):
            raise ValueError(
                f"{type(self).__name__}: word_starts must hold one bool per "
                f"token id ({self.vocabulary_size}); got shape "
                f"{word_starts.shape}. Use tokenizer.word_start_table().")
        if not isinstance(shared_replacement, (bool, np.bool_)):
            raise ValueError(
                f"{type(self).__name__}: shared_replacement must be True or "
                f"False; got {shared_replacement!r}.")
        self.word_starts = tf.constant(word_starts)
        self.shared_replacement = bool(shared_replacement)
        self._set_length_probabilities([1.0])  # single words

    def _set_length_probabilities(self, probabilities):
        """Candidates cover n words with probability `probabilities[n-1]`
        (the distribution `span_lengths` draws from)."""
        self.length_probabilities = np.asarray(probabilities, np.float64)
        self._cumulative = tf.constant(
            np.cumsum(self.length_probabilities)[:-1], tf.float32)

    # ------------------------------------------------------------------
    # What subclasses choose: where candidates start, how long they are,
    # how they meet the budget and the words masked before them
    # ------------------------------------------------------------------
    def candidate_order(self, word_lengths, num_words):
        """`(batch, words)`: the word indices in the order they are tried;
        a uniformly random order of each row's words (Google's shuffle)."""
        return _random_order(self.generator, word_lengths, num_words,
                             weighted=False)

    def span_lengths(self, shape):
        """Lengths in words of `shape` candidates, drawn from
        `length_probabilities` (1 here: single words)."""
        if len(self.length_probabilities) == 1:
            return tf.ones(shape, tf.int32)
        draw = self.generator.uniform(shape)
        return 1 + tf.reduce_sum(tf.cast(
            draw[..., tf.newaxis] >= self._cumulative, tf.int32), axis=-1)

    def fit_span(self, in_span, chosen, word_lengths, count, budget):
        """Which words of a candidate (`in_span`, `(batch, words)` bool) to
        add, given the words `chosen` before it, the `count` of their
        tokens and the `budget` (both `(batch,)`). Google's rule: its words
        not masked yet, left to right, while the total stays within the
        budget (a word that would overshoot is skipped; the running total
        only grows, so the words after it are too)."""
        new = in_span & ~chosen
        total = count[:, tf.newaxis] + tf.cumsum(
            tf.where(new, word_lengths, 0), axis=1)
        return new & (total <= budget[:, tf.newaxis])

    # ------------------------------------------------------------------
    def select(self, ids, selectable, budget):
        selected, spans = self.select_spans(ids, selectable, budget)
        return selected, self.decision_groups(selected, spans)

    def decision_groups(self, selected, spans):
        """The groups of `select` (who shares an 80/10/10 decision): the
        token alone, or with `shared_replacement` its candidate's tokens."""
        if self.shared_replacement:
            return spans
        return tf.broadcast_to(tf.range(tf.shape(selected)[1]),
                               tf.shape(selected))

    def select_spans(self, ids, selectable, budget):
        """`(selected, spans)`, both `(batch, seq)`: the positions to mask
        and, for each, the candidate that added it (0 for the first one
        tried, 1, ...; 0 where not selected)."""
        words = word_structure(ids, selectable, self.word_starts)
        word_of, word_lengths, word_segment, num_words = words
        batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
        order = self.candidate_order(word_lengths, num_words)
        span_words = self.span_lengths(tf.shape(order))
        word_index = tf.range(length)[tf.newaxis, :]  # (1, words)

        def step(k, chosen, group, count):
            anchor = order[:, k]  # (batch,)
            anchor_selected = tf.gather(chosen, anchor, batch_dims=1)
            active = (anchor < num_words) & (count < budget) & \
                ~anchor_selected
            # The span: `span_words[:, k]` words from the anchor, in its
            # segment.
            in_span = active[:, tf.newaxis] & \
                (word_index >= anchor[:, tf.newaxis]) & \
                (word_index < (anchor + span_words[:, k])[:, tf.newaxis]) & \
                (word_segment == tf.gather(word_segment, anchor,
                                           batch_dims=1)[:, tf.newaxis])
            added = self.fit_span(in_span, chosen, word_lengths, count,
                                  budget)
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
        spans = tf.where(selected,
                         tf.gather(group, safe_word, batch_dims=1), 0)
        return selected, spans


class NgramMasker(WholeWordMasker):
    """`WholeWordMasker` that selects n-grams of whole words (ALBERT).

    As ALBERT's `create_pretraining_data.py` (its defaults `ngram=3`,
    `favor_shorter_ngram`, `do_whole_word_mask`): each word, in random
    order, starts a candidate n-gram of n words, n drawn with p(n)
    proportional to 1/n (6/11, 3/11, 2/11); an n-gram that would overshoot
    the budget is shortened to n - 1, ..., 1 words, and skipped if even
    one word overshoots or if any of its words is masked already. One
    80/10/10 decision per piece, as the original. (The original's word
    list skips [CLS] and [SEP], so its rare n-gram may run from the end of
    the first segment into the second; here an n-gram stops at the
    segment's end, as every masker's spans do.)

    Args (beyond `WholeWordMasker`'s):
        max_ngram: the longest n-gram in words (3).

    Example:
    ```python
    # Setup: the example of kzoo.preprocessing.SpanMasker (tokenizer,
    # token_ids: 17 text tokens).
    ngrams = preprocessing.NgramMasker(
        tokenizer.vocabulary_size, tokenizer.mask_token_id,
        tokenizer.special_token_ids, 32, tokenizer.word_start_table(),
        max_ngram=3, seed=1)
    np.testing.assert_allclose(ngrams.length_probabilities,
                               [6 / 11, 3 / 11, 2 / 11])   # p(n) ~ 1/n
    weights = ngrams(np.asarray(token_ids["token_ids"]))[-1]
    assert np.asarray(weights).sum() == 3   # ceil(15% of 17)
    ```
    """

    def __init__(self, *args, max_ngram=MAX_NGRAM, **kwargs):
        super().__init__(*args, **kwargs)
        self._set_length_probabilities(ngram_length_probabilities(max_ngram))
        self.max_ngram = int(max_ngram)

    def fit_span(self, in_span, chosen, word_lengths, count, budget):
        # ALBERT shortens an n-gram that would overshoot to its longest
        # prefix within the budget (its words masked before count: the
        # original checks the budget first)...
        total = count[:, tf.newaxis] + tf.cumsum(
            tf.where(in_span, word_lengths, 0), axis=1)
        fits = in_span & (total <= budget[:, tf.newaxis])
        # ...then skips it whole if any of those words is masked already.
        clash = tf.reduce_any(fits & chosen, axis=1, keepdims=True)
        return fits & ~clash


class SpanMasker(WholeWordMasker):
    """`WholeWordMasker` that selects spans of whole words (SpanBERT).

    Spans are drawn until exactly the budget is masked: the span that
    reaches it is cut at the budget, inside its last word if need be (as
    SpanBERT adds a span's tokens one by one and stops at the budget).

    Args (beyond `WholeWordMasker`'s):
        geometric_p: parameter of the span-length distribution (0.2).
        max_span_words: longest span in words (10).
        shared_replacement: default True here: one 80/10/10 decision per
            merged span, as the SpanBERT paper (`replacement_method
            ="span"`); False decides per piece.

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
                 max_span_words=MAX_SPAN_WORDS, shared_replacement=True,
                 **kwargs):
        super().__init__(*args, shared_replacement=shared_replacement,
                         **kwargs)
        if not 0.0 < geometric_p <= 1.0:
            raise ValueError(f"geometric_p must be in (0, 1]; got "
                             f"{geometric_p}.")
        self._set_length_probabilities(span_length_probabilities(
            geometric_p, int(max_span_words)))

    def candidate_order(self, word_lengths, num_words):
        # SpanBERT draws an anchor token, then moves to its word's start:
        # a word is drawn with probability proportional to its length.
        return _random_order(self.generator, word_lengths, num_words,
                             weighted=True)

    def fit_span(self, in_span, chosen, word_lengths, count, budget):
        # Every new word that starts within the budget: the one that
        # crosses it is cut to it in select_spans.
        new = in_span & ~chosen
        before = count[:, tf.newaxis] + tf.cumsum(
            tf.where(new, word_lengths, 0), axis=1, exclusive=True)
        return new & (before < budget[:, tf.newaxis])

    def select_spans(self, ids, selectable, budget):
        selected, spans = super().select_spans(ids, selectable, budget)
        # The overshoot lies at the end of the last span (its last word
        # crossed the budget, and no span came after it): drop it there.
        overshoot = tf.reduce_sum(tf.cast(selected, tf.int32), axis=1) - \
            budget
        last = tf.reduce_max(tf.where(selected, spans, -1), axis=1)
        in_last = selected & (spans == last[:, tf.newaxis])
        from_end = tf.cumsum(tf.cast(in_last, tf.int32), axis=1,
                             reverse=True)
        return selected & ~(in_last & (from_end <= overshoot[:, tf.newaxis])
                            ), spans

    def decision_groups(self, selected, spans):
        if not self.shared_replacement:
            return super().decision_groups(selected, spans)
        # SpanBERT decides once per span after merging overlapping and
        # adjacent ones: per maximal run of selected tokens.
        previous = tf.pad(selected[:, :-1], [[0, 0], [1, 0]])
        runs = tf.cumsum(tf.cast(selected & ~previous, tf.int32), axis=1)
        return tf.where(selected, runs - 1, 0)


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


def span_boundaries(positions, weights, sequence_length, text=None):
    """For each mask slot, its span's boundary tokens and its place in the
    span (SpanBERT's span boundary objective), from a masker's outputs.

    A span is a maximal run of selected positions (adjacent spans merge,
    as in SpanBERT). For the token at `positions` (`(batch, slots)`, the
    real ones where `weights` > 0): `left` is the last unselected position
    before it, `right` the first after it, `relative` its offset from the
    span's first token (0, 1, ...). A boundary outside the row is -1
    (left) or `sequence_length` (right); padding slots get zeros.

    `text` (optional, `(batch, seq)` bool, `MaskedLMMasker.selectable`):
    True at the text tokens. A boundary that is no text token ([CLS],
    [SEP], padding) then counts as outside the row too: SpanBERT gives no
    boundary target to a span at the edge of its block of text (its
    `span_masking` keeps a pair only for `start > 0 and end < len - 1`).

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
    # [CLS] a b c [SEP]: "a" masked; its left boundary is [CLS], no text.
    left, right, _ = preprocessing.span_boundaries(
        np.array([[1]]), np.array([[1.0]]), sequence_length=5,
        text=np.array([[False, True, True, True, False]]))
    assert np.asarray(left).tolist() == [[-1]]
    assert np.asarray(right).tolist() == [[2]]
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
    relative = tf.where(real, positions - left - 1, 0)
    if text is not None:
        text = tf.cast(text, tf.bool)
        last = tf.shape(text)[1] - 1
        left_text = (left >= 0) & tf.gather(
            text, tf.maximum(left, 0), batch_dims=1)
        right_text = (right <= last) & tf.gather(
            text, tf.minimum(right, last), batch_dims=1)
        left = tf.where(left_text, left, -1)
        right = tf.where(right_text, right, sequence_length)
    left = tf.where(real, left, 0)
    right = tf.where(real, right, 0)
    return left, right, relative
