"""BART's noising (kzoo.preprocessing.text_infilling) on real text: the
span budget and length distribution, the share of text noised,
reconstruction (each <mask> stands for one contiguous, possibly empty,
run of the original), sentence permutation; and the denoising
preprocessor in tf.data (fresh noise every epoch, reproducible with a
seed, targets the original text)."""

import math

import numpy as np
import pytest

import kzoo
from bart_testing import BART_PRESET
from helpers import austen_passages
from kzoo.preprocessing import (infilling_spans, permute_sentences,
                                text_infilling)

MASK = 50261  # the stand-in vocabulary's <mask>


@pytest.fixture(scope="module")
def tokenizer():
    return kzoo.BartTokenizer.from_preset(str(BART_PRESET))


@pytest.fixture(scope="module")
def passages(tokenizer):
    texts = austen_passages("pride_and_prejudice", words=60)[:120]
    return [np.asarray(ids, "int64") for ids in tokenizer(texts)]


def _reconstructs(original, noised, mask):
    """Whether replacing each mask of `noised` by a contiguous (possibly
    empty) run of `original` gives `original` back (dynamic programming
    over both positions)."""
    n, m = len(original), len(noised)
    reach = np.zeros((m + 1, n + 1), bool)  # noised[:i] makes original[:j]
    reach[0, 0] = True
    for i, token in enumerate(noised):
        if token == mask:
            # A mask takes any run: original[j:k] for k >= j.
            reach[i + 1] = np.maximum.accumulate(reach[i])
        else:
            reach[i + 1, 1:] = reach[i, :-1] & (original == token)
    return bool(reach[m, n])


@pytest.mark.once
def test_span_budget_and_lengths():
    rng = np.random.default_rng(0)
    lengths, zeros, spans = [], 0, 0
    for _ in range(1000):
        starts, span_lengths, inserts = infilling_spans(500, rng)
        # The lengths drawn sum to the budget exactly: ceil(30% of words).
        assert span_lengths.sum() == 150
        assert len(set(starts.tolist())) == len(starts)
        assert (span_lengths >= 1).all()
        lengths += span_lengths.tolist()
        zeros += inserts
        spans += len(span_lengths) + inserts
    # Poisson(3): P(0) = e^-3; the non-zero lengths average 3 / (1 - e^-3)
    # (the last span of each text is cut to the budget: a little less).
    assert abs(zeros / spans - math.exp(-3)) < 0.006
    assert abs(np.mean(lengths) - 3 / (1 - math.exp(-3))) < 0.05


@pytest.mark.once
def test_infilling_on_real_text(tokenizer, passages):
    rng = np.random.default_rng(1)
    table = tokenizer.word_start_table()
    assert tokenizer.mask_token_id == MASK
    noised_share = []
    for ids in passages:
        noised = text_infilling(ids, rng, MASK, word_starts=table[ids])
        assert _reconstructs(ids, noised, MASK)
        assert not _reconstructs(ids[1:], noised[noised != MASK], -1)
        assert (noised == MASK).sum() >= 1
        noised_share.append(1 - (noised != MASK).sum() / len(ids))
    # 30% of the words go into spans; spans that overlap and the masks
    # that stand in for them make it a little under 30% of the tokens.
    assert 0.25 < np.mean(noised_share) < 0.30, np.mean(noised_share)


@pytest.mark.once
def test_sentence_permutation(tokenizer):
    text = ("It is a truth universally acknowledged. Mr. Bennet was odd! "
            "Was she pleased? She was.")
    ids = np.asarray(tokenizer([text])[0], "int64")
    ends = np.isin(ids, [tokenizer.token_to_id(t) for t in ".!?"])
    rng = np.random.default_rng(0)
    orders = set()
    for _ in range(30):
        permuted = permute_sentences(ids, ends, rng)
        assert sorted(permuted.tolist()) == sorted(ids.tolist())
        orders.add(tuple(permuted.tolist()))
    assert len(orders) > 5  # 6 sentences ("Mr." ends one too): many orders


def test_denoising_preprocessor_in_tf_data():
    import tensorflow as tf
    texts = austen_passages("pride_and_prejudice", words=30)[:8]
    preprocessor = kzoo.BartDenoisingPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=48, seed=5)
    # Two epochs of two batches, in one pass.
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(4).map(
        preprocessor).repeat(2)
    batches = [(np.asarray(x["encoder_token_ids"]), np.asarray(y))
               for x, y, _ in dataset]
    for (enc1, labels1), (enc2, labels2) in zip(batches[:2], batches[2:]):
        np.testing.assert_array_equal(labels1, labels2)  # the text itself
        assert not np.array_equal(enc1, enc2)  # fresh noise each epoch
        assert (enc1 == MASK).any(axis=1).all()
        assert (enc1[:, 0] == 0).all() and (labels1[:, 0] == 0).all()
    # Targets: <s> text </s>, the text cut to leave room for both.
    tokenizer = preprocessor.tokenizer
    ids = [np.asarray(row[:46], "int64") for row in tokenizer(texts)]
    labels = np.concatenate([labels for _, labels in batches[:2]])
    for row, text_ids in zip(labels, ids):
        np.testing.assert_array_equal(row[1:1 + len(text_ids)], text_ids)
        assert row[1 + len(text_ids)] == 2
    # The same seed draws the same noise.
    again = kzoo.BartDenoisingPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=48, seed=5)
    for row, text_ids in zip(batches[0][0], ids[:4]):
        noised = again.noise(text_ids)
        np.testing.assert_array_equal(row[1:1 + len(noised)], noised)
