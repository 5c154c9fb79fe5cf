"""Byte-level BPE (GPT-2's, RoBERTa's, BART's) as TensorFlow ops: what a
byte-level tokenizer runs inside `tf.data`, `tf.function` and an exported
SavedModel. (Eager calls run the Hugging Face `tokenizers` library.)

Why not keras-hub's graph, which kzoo ran before: TensorFlow took 3.5 s
to trace it in each process, and every new `tf.data` iterator (one per
epoch) set it up anew: 0.2 s for the bare graph (1,121 ops in 91
functions, most of them the guards of ragged tensors' validity checks),
0.7 s for RoBERTa's tokenizer. This graph works on flat tensors with
owner indices instead of nested ragged tensors (555 ops, 2 functions):
~0.1 s to trace, 0.05 s per iterator (0.2 s for RoBERTa's tokenizer;
docs/speed.md). It also follows GPT-2's regex where keras-hub's did not
(whitespace runs before words; see `_BEFORE_A_WORD`). It keeps no word
cache; repeated words of a batch are merged once (`tf.unique`).

The merge loop takes, in every word at once, the adjacent pair with the
lowest merge rank, its first occurrence, until no pair has a rank: the
order of the `tokenizers` library (a heap by rank, then position), so
both paths give the same ids for any merges file.
"""

import re

import tensorflow as tf

from kzoo.preprocessing.text import WHITESPACE

# GPT-2 splits text into words with the regex
#   's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
# RE2 has no look-ahead, and what `\s+(?!\S)` does is put the last
# character of a run of whitespace before a word apart from the rest of
# its run: a space joins the word (` ?\p{L}+`), anything else ("\n") is a
# word of its own. So a cut goes before that character first; what the
# other rules leave between their matches is whitespace, cut there.
# (keras-hub's graph emulated it with a marker character before spaces
# only: it made one word of "\n\n" before a word, where GPT-2 and the
# eager path make two, and dropped the Devanagari digit six, its marker.)
_CUT = "\x00"  # texts hold no NUL: byte-level tokenizers replace it first
_SPACE = WHITESPACE[1:-1]  # what GPT-2's `\s` matches, as a class's inside
_BEFORE_A_WORD = (rf"([{_SPACE}])([^{_SPACE}])", _CUT + r"\1\2")
_WORDS = (r"'s|'t|'re|'ve|'m|'ll|'d"
          rf"| ?\p{{L}}+| ?\p{{N}}+| ?[^{_SPACE}\p{{L}}\p{{N}}{_CUT}]+")
# A letter stands in for a special token while words are split (one word,
# never split further); the token comes back afterwards.
_TOKEN_STAND_IN = "\u0134"
_NO_RANK = tf.int32.max


def byte_symbols():
    """The byte -> symbol table of byte-level BPE: printable bytes are
    their own character, the others (control bytes, space, ...) map to
    the characters from U+0100 on, in byte order."""
    printable = [*range(ord("!"), ord("~") + 1),
                 *range(ord("\xa1"), ord("\xac") + 1),
                 *range(ord("\xae"), ord("\xff") + 1)]
    others = [b for b in range(256) if b not in printable]
    table = {b: chr(b) for b in printable}
    table.update({b: chr(256 + n) for n, b in enumerate(others)})
    return table


class BytePairGraph(tf.Module):
    """The tables of one vocabulary and merges list, and `tokenize`.

    Args:
        vocabulary: dict token -> id.
        merges: merge rules ("a b"), highest priority first; a leading
            "#version" line is skipped.
        unsplittable_tokens: tokens a text never splits (special tokens):
            each occurrence is its own word and its id.
        add_prefix_space: put a space before each text (so its first word
            is spelled as in the middle of a text).
    """

    def __init__(self, vocabulary, merges, unsplittable_tokens=(),
                 add_prefix_space=False):
        super().__init__(name="byte_pair_graph")
        rules = [rule for rule in merges if not rule.startswith("#version")]
        self.unsplittable_tokens = list(unsplittable_tokens)
        self.add_prefix_space = add_prefix_space
        # Tables are resources: made outside any trace, so every graph
        # (and a SavedModel that tracks this module) shares them.
        with tf.init_scope():
            table = byte_symbols()
            self._byte_to_symbol = _static_table(
                [bytes([b]) for b in table], list(table.values()), "")
            self._merge_rank = _static_table(
                rules, list(range(len(rules))), _NO_RANK, tf.int32)
            self._token_id = _static_table(
                list(vocabulary), list(vocabulary.values()), -1, tf.int32)

    def tokenize(self, texts):
        """A 1-D tf.string tensor -> ragged int32 ids, one row per text."""
        if self.add_prefix_space:
            texts = tf.strings.join([" ", texts])
        words, word_text = self._split_words(texts)
        unique = tf.unique(words, out_idx=tf.int64)
        symbols, symbol_word = self._merged_symbols(unique.y)
        ids = self._token_id.lookup(symbols)
        # Each word's ids, from its unique word's.
        lengths = tf.math.unsorted_segment_sum(
            tf.ones_like(symbol_word), symbol_word, tf.size(unique.y))
        starts = tf.cumsum(lengths, exclusive=True)
        spans = tf.ragged.range(tf.gather(starts, unique.idx),
                                tf.gather(starts + lengths, unique.idx))
        token_text = tf.gather(word_text, spans.value_rowids())
        return tf.RaggedTensor.from_value_rowids(
            tf.gather(ids, spans.flat_values), token_text,
            nrows=tf.size(texts, out_type=tf.int64), validate=False)

    def _split_words(self, texts):
        """Texts -> their words and the text of each, flat, in text
        order."""
        chunks, chunk_text = texts, tf.range(tf.size(texts, tf.int64))
        if self.unsplittable_tokens:
            # Split at special tokens first; each piece between them is
            # split into words on its own (as the `tokenizers` library
            # does). Longest first: of two tokens at one place, the
            # longer wins.
            tokens = sorted(self.unsplittable_tokens, key=len, reverse=True)
            chunks, chunk_text = _split_keeping(
                texts, "|".join(re.escape(token) for token in tokens))
        special = self._is_special(chunks)
        words, word_chunk = _split_keeping(
            tf.strings.regex_replace(
                tf.where(special, _TOKEN_STAND_IN, chunks), *_BEFORE_A_WORD),
            _WORDS)
        words = tf.where(tf.gather(special, word_chunk),
                         tf.gather(chunks, word_chunk), words)
        return words, tf.gather(chunk_text, word_chunk)

    def _is_special(self, strings):
        """Whether each string is one of the unsplittable tokens."""
        if not self.unsplittable_tokens:
            return tf.zeros_like(strings, tf.bool)
        return tf.reduce_any(tf.equal(
            strings[:, tf.newaxis], tf.constant(self.unsplittable_tokens)),
            axis=1)

    def _merged_symbols(self, words):
        """Words -> their BPE symbols, flat, and each symbol's word."""
        is_special = self._is_special(words)
        spelled = tf.strings.bytes_split(tf.where(is_special, "", words))
        specials = tf.where(is_special)[:, 0]
        # A special token is one symbol, placed in word order.
        owner = tf.concat([spelled.value_rowids(), specials], axis=0)
        order = tf.argsort(owner, stable=True)
        symbols = tf.gather(tf.concat(
            [self._byte_to_symbol.lookup(spelled.flat_values),
             tf.gather(words, specials)], axis=0), order)
        owner = tf.gather(owner, order)
        count = tf.size(words)

        def merge_step(symbols, owner, _):
            left, right = symbols[:-1], symbols[1:]
            pair_owner = owner[:-1]
            ranks = tf.where(
                tf.equal(pair_owner, owner[1:]),
                self._merge_rank.lookup(
                    tf.strings.join([left, right], separator=" ")),
                _NO_RANK)
            best = tf.math.unsorted_segment_min(ranks, pair_owner, count)
            at_best = tf.logical_and(
                tf.equal(ranks, tf.gather(best, pair_owner)),
                ranks < _NO_RANK)
            position = tf.range(tf.size(ranks))
            first = tf.math.unsorted_segment_min(
                tf.where(at_best, position, _NO_RANK), pair_owner, count)
            merge = tf.equal(position, tf.gather(first, pair_owner))
            merged = tf.where(merge, tf.strings.join([left, right]), left)
            keep = tf.concat([[True], tf.logical_not(merge)], axis=0)
            symbols = tf.concat([merged, symbols[-1:]], axis=0)
            return (tf.boolean_mask(symbols, keep),
                    tf.boolean_mask(owner, keep), tf.reduce_any(merge))

        symbols, owner, _ = tf.while_loop(
            lambda symbols, owner, merged: merged, merge_step,
            [symbols, owner, tf.size(symbols) > 1],
            shape_invariants=[tf.TensorShape([None]), tf.TensorShape([None]),
                              tf.TensorShape([])])
        return symbols, owner


def _split_keeping(texts, pattern):
    """Each text -> its matches of `pattern` and the stretches between
    them, in order, flat (empty pieces dropped), and the text of each.

    Cuts (NUL) already in a text cut it too. tensorflow-text's
    `regex_split(texts, pattern, pattern)` does the rest, but checks its
    ragged result with guarded assertions: 18 functions that every new
    `tf.data` iterator instantiates (half of this graph's set-up time).
    """
    pieces = tf.strings.split(
        tf.strings.regex_replace(texts, f"({pattern})", _CUT + r"\1" + _CUT),
        _CUT)
    owner = pieces.value_rowids()
    keep = tf.strings.length(pieces.flat_values) > 0
    return (tf.boolean_mask(pieces.flat_values, keep),
            tf.boolean_mask(owner, keep))


def _static_table(keys, values, default, value_dtype=None):
    return tf.lookup.StaticHashTable(
        tf.lookup.KeyValueTensorInitializer(
            tf.constant(keys),
            tf.constant(values, dtype=value_dtype)), default)
