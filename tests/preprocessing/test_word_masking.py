"""Whole-word, n-gram and span masking statistics on real text (Jane Austen),
through the shared masked-LM preprocessor, in tf.data as `fit` runs it.
TensorFlow only (masking happens in tf.data whatever the backend): `once`."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import AUSTEN_NOVELS, BERT_SPECIAL_IDS, austen_text, to_numpy
from kzoo.core.arguments import ArgumentError
from kzoo.preprocessing import span_boundaries, span_length_probabilities
from roberta_testing import ROBERTA_PRESET

pytestmark = pytest.mark.once

SEQ = 128
NUM_SEQUENCES = 1000
SPECIAL = list(BERT_SPECIAL_IDS.values())
MASK = BERT_SPECIAL_IDS["[MASK]"]


def windows(num, words=110, stride=13):
    """`num` 110-word windows of the excerpts: enough to fill 128 tokens,
    so every row has (nearly) the same selectable count."""
    tokens = " ".join(austen_text(n) for n in AUSTEN_NOVELS).split()
    result = [" ".join(tokens[s:s + words])
              for s in range(0, len(tokens) - words, stride)]
    assert len(result) >= num, len(result)
    return result[:num]


def bert(masking, **kwargs):
    return kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ, masking=masking,
        **kwargs)


def run(preprocessor, texts):
    """(original ids, x, y, weights) of one pass of tf.data masking."""
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(250)
    original = np.concatenate([
        to_numpy(preprocessor.pack(batch)["token_ids"]) for batch in dataset])
    parts = [to_numpy(batch) for batch in dataset.map(preprocessor)]
    x = {k: np.concatenate([p[0][k] for p in parts]) for k in parts[0][0]}
    y = np.concatenate([p[1] for p in parts])
    weights = np.concatenate([p[2] for p in parts])
    return original, x, y, weights


def word_ids(original, word_starts):
    """Word index of every selectable token (-1 for special tokens), as
    the masker defines words: a word-start token, or the first token after
    a special one, opens a word."""
    selectable = ~np.isin(original, SPECIAL)
    previous = np.pad(selectable[:, :-1], [(0, 0), (1, 0)])
    starts = selectable & (word_starts[original] | ~previous)
    words = np.cumsum(starts, axis=1) - 1
    return np.where(selectable, words, -1)


def selected_matrix(original, x, weights):
    selected = np.zeros(original.shape, bool)
    rows, slots = np.nonzero(weights > 0)
    selected[rows, x["mask_positions"][rows, slots]] = True
    return selected


@pytest.fixture(scope="module")
def word_starts():
    return kzoo.BertTokenizer.from_preset(
        "bert_base_en_uncased").word_start_table()


@functools.lru_cache(maxsize=None)
def masked_run(masking):
    return masking, run(bert(masking), windows(NUM_SEQUENCES))


@pytest.fixture(scope="module", params=["whole_word", "ngram", "span"])
def masked(request):
    return masked_run(request.param)


def test_fifteen_percent_of_tokens(masked):
    _, (original, x, y, weights) = masked
    selectable = ~np.isin(original, SPECIAL)
    assert selectable.sum(axis=1).min() > 100  # rows really are full
    rate = weights.sum() / selectable.sum()
    # The budget is ceil(15%) = 19 of 126 tokens (0.151); whole words and
    # n-grams that would overshoot are skipped, so a row may end a token
    # short; span masking meets it exactly (SpanBERT's last span is cut).
    assert 0.140 <= rate <= 0.152, rate
    if masked[0] == "span":
        assert (weights.sum(axis=1) == 19).all()
    per_row = weights.sum(axis=1) / selectable.sum(axis=1)
    assert per_row.min() > 0.10 and per_row.max() <= 0.16


def test_eighty_ten_ten(masked):
    _, (original, x, y, weights) = masked
    rows, slots = np.nonzero(weights > 0)
    masked_ids = x["token_ids"][rows, x["mask_positions"][rows, slots]]
    original_ids = y[rows, slots]
    # Decisions are per piece for whole words and n-grams (as Google's
    # and ALBERT's code), per merged span for spans (SpanBERT), so tokens
    # are not all independent: the bands are wider than for token
    # masking. (tests/preprocessing/test_original_masking_rules.py holds
    # the per-piece decisions to Google's.)
    to_mask = np.mean(masked_ids == MASK)
    unchanged = np.mean(masked_ids == original_ids)
    assert abs(to_mask - 0.80) < 0.03, to_mask
    assert abs(unchanged - 0.10) < 0.025, unchanged
    assert abs(1 - to_mask - unchanged - 0.10) < 0.025


def test_special_tokens_never_selected(masked):
    _, (original, x, y, weights) = masked
    rows, slots = np.nonzero(weights > 0)
    assert not np.isin(original[rows, x["mask_positions"][rows, slots]],
                       SPECIAL).any()
    np.testing.assert_array_equal(
        y[rows, slots], original[rows, x["mask_positions"][rows, slots]])


def test_whole_words_never_split(masked, word_starts):
    masking, (original, x, y, weights) = masked
    words = word_ids(original, word_starts)
    selected = selected_matrix(original, x, weights)
    multi_piece = cut = 0
    for row in range(len(original)):
        chosen = np.unique(words[row][selected[row]])
        split = [word for word in chosen
                 if not selected[row][words[row] == word].all()]
        if masking == "span":
            # SpanBERT stops at the budget, inside the last word if need
            # be: at most one word per row is cut, to its first pieces.
            assert len(split) <= 1, (row, split)
            for word in split:
                pieces = selected[row][words[row] == word]
                assert pieces[0] and (np.diff(pieces.astype(int)) <= 0).all()
            cut += len(split)
        else:
            assert not split, (row, split)
        multi_piece += sum((words[row] == word).sum() > 1 for word in chosen)
        if masking != "span":
            continue
        # Every piece of a span got the same treatment (one decision per
        # merged span, SpanBERT's).
        for word in chosen:
            pieces = np.flatnonzero((words[row] == word) & selected[row])
            is_mask = x["token_ids"][row, pieces] == MASK
            assert is_mask.all() or not is_mask.any(), (row, word)
    assert multi_piece > 100  # the check saw words of several pieces
    # Rows cut inside a word, torch, seeds 1-5: span 0.062 +- 0.005 of
    # them (the others 0): the bar is 25 sd away.
    assert cut < 0.2 * len(original)


def test_masking_touches_only_selected_tokens(masked):
    _, (original, x, y, weights) = masked
    selected = selected_matrix(original, x, weights)
    np.testing.assert_array_equal(x["token_ids"][~selected],
                                  original[~selected])


def test_span_inputs_only_with_span_masking(masked):
    masking, (original, x, y, weights) = masked
    span_keys = {"span_left", "span_right", "span_relative_positions"}
    assert span_keys <= set(x) if masking == "span" else \
        not span_keys & set(x)


def test_span_boundaries_on_real_spans():
    _, (original, x, y, weights) = masked_run("span")
    selected = selected_matrix(original, x, weights)
    text = ~np.isin(original, SPECIAL)
    rows, slots = np.nonzero(weights > 0)
    positions = x["mask_positions"][rows, slots]
    left = x["span_left"][rows, slots]
    right = x["span_right"][rows, slots]
    relative = x["span_relative_positions"][rows, slots]
    # The span around each masked token: from position - relative to the
    # first unselected position after it.
    start = positions - relative
    end = positions.copy()
    while True:
        longer = (end + 1 < SEQ) & selected[rows, np.minimum(end + 1,
                                                             SEQ - 1)]
        if not longer.any():
            break
        end += longer
    assert selected[rows, start].all() and not selected[rows, start - 1].any()
    for row, s, e in zip(rows, start, end):
        assert selected[row, s:e + 1].all()
    # Its boundaries: the tokens just outside it, where they are text;
    # -1 / SEQ where they are [CLS] or [SEP] (SpanBERT scores no such
    # span).
    np.testing.assert_array_equal(
        left, np.where(text[rows, start - 1], start - 1, -1))
    after = np.minimum(end + 1, SEQ - 1)
    np.testing.assert_array_equal(
        right, np.where((end + 1 < SEQ) & text[rows, after], end + 1, SEQ))
    # Measured, torch, seeds 1-10: spans at the left edge 180 +- 26
    # (bar 100: 3.1 sd), at the right edge 505 +- 40, inside 0.964 +-
    # 0.003 of them.
    assert (left == -1).sum() > 100 and (right == SEQ).sum() > 100
    assert ((left >= 0) & (right < SEQ)).mean() > 0.5


def test_span_lengths_follow_the_clipped_geometric():
    # The sampler itself: chi-square against SpanBERT's distribution
    # (geometric p = 0.2 renormalised over 1..10), fixed seed.
    preprocessor = bert("span")
    preprocessor.pack(["warm up"])  # setup() makes the masker
    masker = preprocessor.masker
    masker.generator.reset_from_seed(7)
    lengths = masker.span_lengths((20000,)).numpy()
    expected = span_length_probabilities() * len(lengths)
    observed = np.bincount(lengths, minlength=11)[1:]
    assert lengths.min() == 1 and lengths.max() == 10
    chi_square = np.sum((observed - expected) ** 2 / expected)
    assert chi_square < 27.88, (chi_square, observed)  # df 9, p = 0.001
    # SpanBERT's mean span: 3.8 words.
    assert abs(lengths.mean() - 3.8) < 0.05
    # A geometric clipped by min(l, 10) instead would pile 13% on 10.
    assert observed[-1] / len(lengths) < 0.04


def test_span_lengths_in_words_on_real_text(word_starts):
    """The first span of every row (never cut by the budget: 10 words of
    prose stay under 19 tokens) has the sampled length, in whole words."""
    preprocessor = bert("span")
    original = to_numpy(preprocessor.pack(windows(NUM_SEQUENCES))[
        "token_ids"])
    masker = preprocessor.masker
    ids = tf.constant(original)
    unselectable = tf.constant(SPECIAL)
    selectable = tf.reduce_all(ids[:, :, None] != unselectable, axis=-1)
    budget = tf.fill((len(original),), 19)
    # select_spans: which candidate span added each token (select's
    # groups merge the spans that touch).
    selected, groups = (t.numpy() for t in
                        masker.select_spans(ids, selectable, budget))
    words = word_ids(original, word_starts)
    lengths, cut = [], 0
    for row in range(len(original)):
        first = groups[row][selected[row]].min()
        span = selected[row] & (groups[row] == first)
        span_words = np.unique(words[row][span])
        # Whole, consecutive words.
        assert (np.diff(span_words) == 1).all()
        if span.sum() > 15 or span_words.max() == words[row].max():
            cut += 1  # could be cut by the budget or the row's end
            continue
        lengths.append(len(span_words))
    assert cut < 0.05 * len(original)
    frequencies = np.bincount(lengths, minlength=11)[1:] / len(lengths)
    np.testing.assert_allclose(frequencies, span_length_probabilities(),
                               atol=0.035)


def test_every_span_gets_one_treatment():
    preprocessor = bert("span")
    original = to_numpy(preprocessor.pack(windows(200))["token_ids"])
    masker = preprocessor.masker
    ids = tf.constant(original)
    selectable = tf.reduce_all(ids[:, :, None] != tf.constant(SPECIAL),
                               axis=-1)
    selected, groups = masker.select(ids, selectable,
                                     tf.fill((len(original),), 19))
    masked, positions, mask_ids, weights = (
        t.numpy() for t in masker._replace(ids, selected, groups))
    groups = groups.numpy()
    decided = 0
    for row in range(len(original)):
        real = positions[row][weights[row]]
        for group in np.unique(groups[row][real]):
            members = real[groups[row][real] == group]
            is_mask = masked[row, members] == MASK
            assert is_mask.all() or not is_mask.any()
            decided += len(members) > 1
    assert decided > 300


def test_hand_made_boundaries():
    # Row: 0 [CLS], 1 a, 2 b*, 3 c*, 4 d, 5 e*, 6 f*, 7 g*, 8 [SEP];
    # * selected; one padding slot.
    positions = tf.constant([[2, 3, 5, 6, 7, 0]])
    weights = tf.constant([[1, 1, 1, 1, 1, 0]], tf.float32)
    left, right, relative = (t.numpy()[0] for t in
                             span_boundaries(positions, weights, 9))
    np.testing.assert_array_equal(left, [1, 1, 4, 4, 4, 0])
    np.testing.assert_array_equal(right, [4, 4, 8, 8, 8, 0])
    np.testing.assert_array_equal(relative, [0, 1, 0, 1, 2, 0])
    # A span at the row's edge has no boundary there.
    left, right, _ = span_boundaries(tf.constant([[0, 1]]),
                                     tf.constant([[1.0, 1.0]]), 2)
    np.testing.assert_array_equal(left.numpy(), [[-1, -1]])
    np.testing.assert_array_equal(right.numpy(), [[2, 2]])
    # Given the text tokens, nor at [CLS] or [SEP]: SpanBERT's block is
    # a..g (0..6), its spans [1, 2] and [4, 6]; only the first has
    # `start > 0 and end < 6`.
    text = tf.constant([[False] + [True] * 7 + [False]])
    left, right, relative = (t.numpy()[0] for t in span_boundaries(
        positions, weights, 9, text=text))
    np.testing.assert_array_equal(left, [1, 1, 4, 4, 4, 0])
    np.testing.assert_array_equal(right, [4, 4, 9, 9, 9, 0])
    np.testing.assert_array_equal(relative, [0, 1, 0, 1, 2, 0])


@pytest.mark.parametrize("masking", ["whole_word", "ngram", "span"])
def test_masks_differ_across_epochs(masking):
    # Dynamic masking in every mode, under a global seed.
    keras.utils.set_random_seed(42)
    dataset = tf.data.Dataset.from_tensor_slices(windows(64)).batch(32).map(
        bert(masking), num_parallel_calls=tf.data.AUTOTUNE)
    epochs = [np.concatenate([to_numpy(b)[0]["mask_positions"]
                              for b in dataset]) for _ in range(2)]
    assert np.mean(np.any(epochs[0] != epochs[1], axis=1)) > 0.9


def test_masking_is_checked_and_kept_in_the_config():
    with pytest.raises(ArgumentError, match=r"BertMaskedLMPreprocessor: "
                       r"Unknown masking mode 'whole_words'.*'token', "
                       r"'whole_word', 'ngram', 'span'.*Did you mean "
                       r"'whole_word'"):
        bert("whole_words")
    preprocessor = bert("span")
    config = preprocessor.get_config()
    assert config["masking"] == "span"
    again = kzoo.BertMaskedLMPreprocessor.from_config(config)
    assert again.masking == "span"
    assert bert("token").get_config()["masking"] == "token"  # the default
    roberta = kzoo.RobertaMaskedLMPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=16, masking="whole_word")
    assert roberta.get_config()["masking"] == "whole_word"


def test_word_start_tables():
    bert_tokenizer = kzoo.BertTokenizer.from_preset("bert_base_en_uncased")
    table = bert_tokenizer.word_start_table()
    assert table.shape == (30522,) and table.dtype == bool
    ids = bert_tokenizer.tokenize("unbelievably")  # un ##bel ##ie ...
    assert list(table[to_numpy(ids)]) == [True] + [False] * (len(ids) - 1)
    assert table[SPECIAL].all()

    roberta = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    table = roberta.word_start_table()
    assert table.shape == (roberta.vocabulary_size,)
    assert table[roberta.token_to_id("\u0120the")]
    assert not table[roberta.token_to_id("the")]
    assert not table[roberta.token_to_id(".")]
    assert table[roberta.special_token_ids].all()
    ids = to_numpy(roberta.tokenize(" Netherfield Park"))
    assert table[ids[0]] and not table[ids[1:-1]].any() and table[ids[-1]]
    # The base class says which tokenizer lacks one.
    with pytest.raises(NotImplementedError, match="BertTokenizer does not"):
        kzoo.Tokenizer.word_start_table(bert_tokenizer)
