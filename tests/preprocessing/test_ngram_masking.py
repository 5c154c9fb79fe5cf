"""ALBERT's n-gram masking (`NgramMasker`, the default of ALBERT's masked-LM
and pretraining preprocessors), held to the original: the ALBERT paper
(section 4.1) and google-research/albert `create_pretraining_data.py`
(`create_masked_lm_predictions`, flags `ngram=3`, `favor_shorter_ngram`,
`do_whole_word_mask`): n-grams of n = 1..3 whole words with
p(n) = (1/n) / (1 + 1/2 + 1/3) = 6/11, 3/11, 2/11."""

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from albert_testing import ALBERT_PRESET
from helpers import AUSTEN_NOVELS, austen_text, to_numpy
from kzoo.core.arguments import ArgumentError

SEQ = 128
# The original's numbers: pvals = 1 / arange(1, 4), normalised.
ALBERT_NGRAM_PROBABILITIES = np.array([6, 3, 2]) / 11


def windows(num, words=90, stride=8):
    tokens = " ".join(austen_text(n) for n in AUSTEN_NOVELS).split()
    return [" ".join(tokens[s:s + words])
            for s in range(0, len(tokens) - words, stride)][:num]


def albert_masker(preprocessor_cls=kzoo.AlbertMaskedLMPreprocessor):
    preprocessor = preprocessor_cls.from_preset(ALBERT_PRESET,
                                                sequence_length=SEQ)
    # setup() makes the masker; the pretrainer's takes sentence pairs.
    pairs = preprocessor.min_segments == 2
    preprocessor.pack((["warm"], ["up"]) if pairs else ["warm up"])
    return preprocessor, preprocessor.masker


@pytest.mark.parametrize("preprocessor_cls", [
    kzoo.AlbertMaskedLMPreprocessor, kzoo.AlbertPretrainerPreprocessor])
def test_albert_draws_ngram_lengths_with_p_one_over_n(preprocessor_cls):
    preprocessor, masker = albert_masker(preprocessor_cls)
    assert preprocessor.masking == "ngram"
    assert isinstance(masker, kzoo.preprocessing.NgramMasker)
    draws = 30000  # the masker's seed comes from the test's global seed
    lengths = to_numpy(masker.span_lengths((draws,)))
    assert set(np.unique(lengths)) == {1, 2, 3}
    frequencies = np.bincount(lengths, minlength=4)[1:] / draws
    # Binomial sd of each frequency: 0.0029, 0.0026, 0.0022. Measured
    # over seeds 1-10: the z-scores spread with sd 0.97 (as binomial),
    # the largest |z| 0.7-2.3; the bar, 4, is 4 sd of that spread.
    sd = np.sqrt(ALBERT_NGRAM_PROBABILITIES *
                 (1 - ALBERT_NGRAM_PROBABILITIES) / draws)
    z = (frequencies - ALBERT_NGRAM_PROBABILITIES) / sd
    assert (np.abs(z) < 4).all(), (frequencies, z)
    np.testing.assert_allclose(masker.length_probabilities,
                               ALBERT_NGRAM_PROBABILITIES)


def test_first_ngram_of_each_row_on_real_text():
    """The first candidate of a row meets no masked word and (with the
    budget set out of reach) no budget: it covers the drawn n whole,
    consecutive words, unless it starts in the last two words of its
    segment (left out: where it starts does not depend on n)."""
    preprocessor, masker = albert_masker()
    original = to_numpy(preprocessor.pack(windows(1500))["token_ids"])
    ids = tf.constant(original)
    selectable = masker.selectable(ids)
    selected, spans = (to_numpy(t) for t in masker.select_spans(
        ids, selectable, tf.fill((len(original),), SEQ)))
    words = word_ids(original, to_numpy(selectable),
                     masker.word_starts.numpy())
    lengths = []
    for row in range(len(original)):
        first = words[row][selected[row] & (spans[row] == 0)]
        span_words = np.unique(first)
        assert (np.diff(span_words) == 1).all()  # consecutive words
        # Whole words: every piece of each of them is selected.
        assert (selected[row][np.isin(words[row], span_words)]).all()
        if span_words[0] < words[row].max() - 1:
            lengths.append(len(span_words))
    assert len(lengths) > 1400
    frequencies = np.bincount(lengths, minlength=4)[1:] / len(lengths)
    # Binomial sd with ~1460 rows: 0.013, 0.012, 0.010. Measured over
    # seeds 1-5: z-scores with sd 0.93, the largest |z| 0.06-2.3; the bar,
    # 4, is 4 sd of that spread.
    sd = np.sqrt(ALBERT_NGRAM_PROBABILITIES *
                 (1 - ALBERT_NGRAM_PROBABILITIES) / len(lengths))
    z = (frequencies - ALBERT_NGRAM_PROBABILITIES) / sd
    assert (np.abs(z) < 4).all(), (frequencies, z)


def word_ids(original, selectable, word_starts):
    """Word index of each text token (-1 elsewhere), as the maskers count
    words: a word start, or the first token after a special one."""
    previous = np.pad(selectable[:, :-1], [(0, 0), (1, 0)])
    starts = selectable & (word_starts[original] | ~previous)
    return np.where(selectable, np.cumsum(starts, axis=1) - 1, -1)


def ngram_masker():
    return kzoo.preprocessing.NgramMasker(
        vocabulary_size=8, mask_token_id=3, unselectable_token_ids=(0, 1, 2),
        sequence_length=8, word_starts=[True] * 8, seed=0)


def fit(masker, in_span, chosen, word_lengths, count, budget):
    return to_numpy(masker.fit_span(
        tf.constant([in_span]), tf.constant([chosen]),
        tf.constant([word_lengths]), tf.constant([count]),
        tf.constant([budget]))[0]).tolist()


def test_an_ngram_meets_the_budget_and_masked_words_as_albert():
    # Words of 1, 2, 1 and 1 tokens; a 3-gram over words 0-2 (4 tokens).
    lengths, ngram = [1, 2, 1, 1], [True, True, True, False]
    nothing = [False] * 4
    masker = ngram_masker()
    # Within the budget: all three words.
    assert fit(masker, ngram, nothing, lengths, 0, 4) == ngram
    # One token over: ALBERT tries the 2-gram next (3 tokens), which fits.
    assert fit(masker, ngram, nothing, lengths, 0, 3) == \
        [True, True, False, False]
    # Even the unigram overshoots (2 tokens in, budget 2): skipped.
    assert fit(masker, ngram, nothing, lengths, 2, 2) == nothing
    # Word 1 masked already: the whole n-gram is skipped, where whole-word
    # and span masking add the words not masked yet.
    chosen = [False, True, False, False]
    assert fit(masker, ngram, chosen, lengths, 2, 8) == nothing
    # ...but only when the covered word is in what fits: the 1-gram left
    # after shortening (budget 3 - 2 masked = 1 token) is added.
    assert fit(masker, ngram, chosen, lengths, 2, 3) == \
        [True, False, False, False]


def test_ngram_masking_through_the_preprocessor():
    preprocessor, masker = albert_masker()
    texts = windows(64)
    x, y, weights = to_numpy(preprocessor(texts))
    clean = to_numpy(preprocessor.pack(texts)["token_ids"])
    real = weights > 0
    selected = np.take_along_axis(clean, x["mask_positions"], axis=1)
    np.testing.assert_array_equal(selected[real], y[real])
    text = clean >= 5  # ALBERT's special pieces are ids 0-4
    budget = np.ceil(0.15 * text.sum(axis=1))
    # ALBERT stops once the budget is met, skipping only what overshoots.
    assert (real.sum(axis=1) <= budget).all()
    # Filled 1.000 of the budget under each of seeds 1-5 (sd 0).
    assert real.sum() > 0.9 * budget.sum()


def test_bad_arguments_are_refused():
    with pytest.raises(ValueError, match=r"max_ngram must be a positive "
                       r"integer; got 0"):
        kzoo.preprocessing.NgramMasker(
            8, 3, (0, 1, 2), 8, word_starts=[True] * 8, max_ngram=0)
    with pytest.raises(ValueError, match=r"shared_replacement must be True "
                       r"or False; got 'yes'"):
        kzoo.preprocessing.NgramMasker(
            8, 3, (0, 1, 2), 8, word_starts=[True] * 8,
            shared_replacement="yes")
    with pytest.raises(ArgumentError, match=r"Unknown masking mode "
                       r"'n_gram'.*'ngram'"):
        kzoo.AlbertMaskedLMPreprocessor.from_preset(
            ALBERT_PRESET, sequence_length=SEQ, masking="n_gram")
    # ALBERT's preprocessors still take BERT's single-token masking.
    token = kzoo.AlbertMaskedLMPreprocessor.from_preset(
        ALBERT_PRESET, sequence_length=SEQ, masking="token")
    assert token.get_config()["masking"] == "token"
    again = kzoo.AlbertMaskedLMPreprocessor.from_config(
        kzoo.AlbertMaskedLMPreprocessor.from_preset(
            ALBERT_PRESET, sequence_length=SEQ).get_config())
    assert again.masking == "ngram"
