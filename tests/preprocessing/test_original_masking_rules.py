"""Two rules of the originals that whole-word and span masking follow:

- SpanBERT (facebookresearch/SpanBERT, pretraining/fairseq/data/
  masking.py, `PairWithSpanMaskingScheme.mask`) masks exactly
  mask_num = ceil(len * mask_ratio) tokens: it adds a span's tokens one by
  one and stops at the budget, inside a word if need be.
- Google's whole-word masking (google-research/bert
  create_pretraining_data.py, `create_masked_lm_predictions` with
  `do_whole_word_mask`) selects whole words but draws the 80/10/10
  decision for each WordPiece (`rng.random()` inside `for index in
  index_set`); so does ALBERT's n-gram masking."""

import math

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import AUSTEN_NOVELS, BERT_SPECIAL_IDS, austen_text, to_numpy

SEQ = 128
SPECIAL = list(BERT_SPECIAL_IDS.values())
MASK = BERT_SPECIAL_IDS["[MASK]"]


def windows(num, words=100, stride=31):
    tokens = " ".join(austen_text(n) for n in AUSTEN_NOVELS).split()
    return [" ".join(tokens[s:s + words])
            for s in range(0, len(tokens) - words, stride)][:num]


def word_ids(original, word_starts):
    """Word index of each text token (-1 for special tokens)."""
    selectable = ~np.isin(original, SPECIAL)
    previous = np.pad(selectable[:, :-1], [(0, 0), (1, 0)])
    starts = selectable & (word_starts[original] | ~previous)
    return np.where(selectable, np.cumsum(starts, axis=1) - 1, -1)


def test_span_masking_fills_the_budget_inside_a_word():
    # Ids: 0 [PAD], 1 [CLS], 2 [SEP], 3 [MASK]; words are "4 5" and "6 7"
    # (5 and 7 continue a word). A row of ten two-piece words: 20 tokens.
    row = [1] + [4, 5, 6, 7] * 5 + [2, 0, 0]
    masker = kzoo.preprocessing.SpanMasker(
        vocabulary_size=8, mask_token_id=3, unselectable_token_ids=(0, 1, 2),
        sequence_length=len(row),
        word_starts=[True, True, True, True, True, False, True, False],
        seed=0)
    ids = tf.constant([row] * 64)
    _, positions, _, weights = (to_numpy(t) for t in masker(ids))
    # SpanBERT's mask_num = math.ceil(20 * 0.15) = 3, met exactly in every
    # row: one whole word and the first piece of another (whole words
    # alone would stop at 2).
    np.testing.assert_array_equal(weights.sum(axis=1), 3)
    for slots, real in zip(positions, weights > 0):
        chosen = set(slots[real])
        starts = {p for p in chosen if row[p] in (4, 6)}
        cut = [p for p in starts if p + 1 not in chosen]
        assert len(cut) == 1 and len(starts) == 2, chosen
        # Every continuation piece comes with its word's first piece.
        assert all(p - 1 in chosen for p in chosen - starts)


def test_span_masking_fills_the_budget_on_real_text():
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ, masking="span")
    texts = windows(200)
    x, y, weights = to_numpy(preprocessor(texts))
    original = to_numpy(preprocessor.pack(texts)["token_ids"])
    text = ~np.isin(original, SPECIAL)
    budget = np.minimum(np.ceil(0.15 * text.sum(axis=1)),
                        preprocessor.mask_selection_length)
    np.testing.assert_array_equal(weights.sum(axis=1), budget)
    # Where the budget ran out inside a word, that word is cut: at most
    # one per row, its first pieces masked.
    words = word_ids(original, preprocessor.tokenizer.word_start_table())
    cut_rows = 0
    for row in range(len(texts)):
        chosen = np.zeros(SEQ, bool)
        chosen[x["mask_positions"][row][weights[row] > 0]] = True
        cut = [w for w in np.unique(words[row][chosen])
               if not chosen[words[row] == w].all()]
        assert len(cut) <= 1
        for w in cut:
            pieces = chosen[words[row] == w]
            assert pieces[0] and (np.diff(pieces.astype(int)) <= 0).all()
        cut_rows += len(cut)
    # Seeds 1-5: 9-16 rows end inside a word (12.6 +- 2.6); whole words
    # alone would give 0, 4.8 sd below.
    assert cut_rows > 0


def decisions(masked_ids, original_ids):
    """0 [MASK], 1 kept, 2 random, per masked token."""
    return np.where(masked_ids == MASK, 0,
                    np.where(masked_ids == original_ids, 1, 2))


def agreement(preprocessor_or_masker, texts, word_starts):
    """(masked words of 2+ pieces, those whose pieces all got the same
    decision, and that number's expectation and sd if each piece decides
    alone, as in Google's code: P(k pieces agree) = 0.8^k + 0.1^k +
    0.1^k)."""
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ)
    original = to_numpy(preprocessor.pack(texts)["token_ids"])
    if isinstance(preprocessor_or_masker, kzoo.preprocessing.MaskedLMMasker):
        masked, positions, _, weights = (
            to_numpy(t) for t in preprocessor_or_masker(original))
    else:
        x, _, weights = to_numpy(preprocessor_or_masker(texts))
        masked, positions = x["token_ids"], x["mask_positions"]
    words = word_ids(original, word_starts)
    count, agreeing, expected, variance = 0, 0, 0.0, 0.0
    for row in range(len(original)):
        chosen = positions[row][weights[row] > 0]
        for word in np.unique(words[row][chosen]):
            pieces = np.flatnonzero(words[row] == word)
            if len(pieces) < 2:
                continue
            kinds = decisions(masked[row, pieces], original[row, pieces])
            count += 1
            agreeing += len(set(kinds)) == 1
            p = 0.8 ** len(pieces) + 2 * 0.1 ** len(pieces)
            expected += p
            variance += p * (1 - p)
    return count, agreeing, expected, math.sqrt(variance)


@pytest.mark.parametrize("masking", ["whole_word", "ngram"])
def test_each_piece_of_a_word_decides_alone(masking):
    word_starts = kzoo.BertTokenizer.from_preset(
        "bert_base_en_uncased").word_start_table()
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=SEQ, masking=masking)
    count, agreeing, expected, sd = agreement(preprocessor, windows(300),
                                              word_starts)
    # 166-205 words of 2+ pieces (seeds 1-5): one decision per word would
    # make all of them agree, z = 10.5-11.6. Measured over seeds 1-5,
    # z = (agreeing - expected) / sd: whole_word 0.1 +- 0.84, ngram
    # -0.8 +- 0.61 (seeds 6-13: -0.4 +- 0.95; 12 more seeds pooled on
    # 3474 words: -0.5), the largest |z| 1.8: the bar, 4, is 3.8 sd or more
    # of every measured spread from its mean.
    assert count > 100
    z = (agreeing - expected) / sd
    assert abs(z) < 4, (count, agreeing, expected, sd)


def test_one_decision_per_word_is_an_option():
    tokenizer = kzoo.BertTokenizer.from_preset("bert_base_en_uncased")
    word_starts = tokenizer.word_start_table()
    masker = kzoo.preprocessing.WholeWordMasker(
        tokenizer.vocabulary_size, tokenizer.mask_token_id,
        tokenizer.special_token_ids, sequence_length=SEQ,
        word_starts=word_starts, shared_replacement=True)
    count, agreeing, _, _ = agreement(masker, windows(100), word_starts)
    assert count > 50 and agreeing == count
