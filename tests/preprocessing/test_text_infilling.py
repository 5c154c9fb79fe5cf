"""BART's noising (kzoo.preprocessing.text_infilling) on real text: the
span budget and length distribution, the share of text noised,
reconstruction (each <mask> stands for one contiguous, possibly empty,
run of the original), sentence permutation; and the denoising
preprocessor in tf.data (fresh noise every epoch, reproducible with a
seed, targets the original text); token deletion (the share asked, kept
tokens in order, every position alike, fresh in tf.data)."""

import math

import numpy as np
import pytest

import kzoo
from bart_testing import BART_PRESET
from helpers import austen_passages
from kzoo.preprocessing import (infilling_spans, permute_sentences,
                                text_infilling, token_deletion)

# The text pipeline runs in TensorFlow ops on every backend: checked in
# one backend's pass (KZOO_ONCE_BACKEND) only.
pytestmark = pytest.mark.once

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


def _is_subsequence(short, long):
    """Whether `short` is `long` with some tokens left out, the rest in
    order (greedy matching decides it)."""
    tokens = iter(long.tolist())
    return all(any(t == u for u in tokens) for t in short.tolist())


@pytest.mark.once
def test_token_deletion_on_real_text(passages):
    rng = np.random.default_rng(2)
    deleted = total = 0
    for ids in passages:
        kept = token_deletion(ids, rng, 0.15)
        # The share asked, rounded up per text, and the rest in order.
        assert len(kept) == len(ids) - math.ceil(0.15 * len(ids))
        assert _is_subsequence(kept, ids)
        assert not _is_subsequence(ids, kept)
        deleted += len(ids) - len(kept)
        total += len(ids)
    # 15%, and less than one token per text more (rounded up).
    shortest = min(len(ids) for ids in passages)
    assert 0.15 <= deleted / total < 0.15 + 1 / shortest, deleted / total
    # Every position is as likely to go (the first and last too): 2000
    # draws over 50 distinct ids, 10 deleted each time: Binomial(2000,
    # 0.2) per position, mean 400, sd 17.9.
    counts = np.zeros(50)
    for _ in range(2000):
        kept = token_deletion(np.arange(50), rng, 0.2)
        assert (np.diff(kept) > 0).all()
        counts[np.setdiff1d(np.arange(50), kept)] += 1
    assert np.abs(counts - 400).max() < 80, counts
    assert token_deletion(np.arange(7), rng, 0.0).tolist() == list(range(7))
    with pytest.raises(ValueError, match="deletion_rate"):
        token_deletion(np.arange(7), rng, 1.0)


@pytest.mark.once
def test_token_deletion_in_tf_data():
    """Deletion alone (no infilling, no permutation), BART's
    token-deletion objective: each row's encoder input is its text with
    15% of the tokens gone, the rest in order, no mask in their place;
    the target is the text; each epoch deletes afresh."""
    import tensorflow as tf
    texts = austen_passages("sense_and_sensibility", words=40)[:16]
    preprocessor = kzoo.BartDenoisingPreprocessor.from_preset(
        str(BART_PRESET), sequence_length=96, seed=3, noise_density=0.0,
        sentence_permutation=False, deletion_rate=0.15)
    config = preprocessor.get_config()
    assert kzoo.BartDenoisingPreprocessor.from_config(
        config).deletion_rate == 0.15
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(8).map(
        preprocessor).repeat(3)
    tokenizer = preprocessor.tokenizer
    ids = [np.asarray(row, "int64") for row in tokenizer(texts)]
    assert max(len(row) for row in ids) <= 94  # no text is cut
    seen = [[] for _ in texts]
    deleted = total = 0
    for batch, (x, labels, _) in enumerate(dataset):
        encoder = np.asarray(x["encoder_token_ids"])
        mask = np.asarray(x["encoder_padding_mask"]).astype(bool)
        labels = np.asarray(labels)
        for i, (row, row_mask, label) in enumerate(zip(encoder, mask,
                                                       labels)):
            text_ids = ids[(batch % 2) * 8 + i]
            np.testing.assert_array_equal(label[1:1 + len(text_ids)],
                                          text_ids)  # the text itself
            noised = row[row_mask][1:-1]  # inside <s> ... </s>
            assert len(noised) == len(text_ids) - math.ceil(
                0.15 * len(text_ids))
            assert _is_subsequence(noised, text_ids)
            assert MASK not in noised
            seen[(batch % 2) * 8 + i].append(tuple(noised.tolist()))
            deleted += len(text_ids) - len(noised)
            total += len(text_ids)
    # 15%, and less than one token per text more (rounded up).
    shortest = min(len(row) for row in ids)
    assert 0.15 <= deleted / total < 0.15 + 1 / shortest, deleted / total
    # Fresh deletions every epoch: three different inputs per text.
    assert all(len(set(draws)) == 3 for draws in seen), seen
    with pytest.raises(ValueError, match="deletion_rate"):
        kzoo.BartDenoisingPreprocessor.from_preset(
            str(BART_PRESET), deletion_rate=1.0)


@pytest.mark.once
def test_recipes_paper_and_released(tokenizer, passages):
    """The defaults are the paper's text infilling (section 2.2: Poisson(3)
    spans, each a <mask>); recipe="released" is what pretrained the
    released bart.large, as its first author's fairseq command gives it
    (fairseq issue 1899: --mask 0.3 --poisson-lambda 3.5 --mask-random
    0.1 --permute-sentences 1). The noise a recipe draws is text
    infilling's with those numbers, draw for draw."""
    paper = kzoo.BartDenoisingPreprocessor(tokenizer, sequence_length=96)
    released = kzoo.BartDenoisingPreprocessor(
        tokenizer, sequence_length=96, recipe="released")
    numbers = ("noise_density", "poisson_lambda", "random_token_ratio",
               "sentence_permutation")
    assert [getattr(paper, n) for n in numbers] == [0.3, 3.0, 0.0, True]
    assert [getattr(released, n) for n in numbers] == [0.3, 3.5, 0.1, True]
    assert kzoo.BartDenoisingPreprocessor.RECIPES["released"][
        "poisson_lambda"] == 3.5

    # Draw for draw: the preprocessor's noise is text_infilling's with the
    # recipe's numbers (sentence permutation off, so one generator serves
    # both).
    random_spans = 0
    for recipe, (lam, ratio) in (("paper", (3.0, 0.0)),
                                 ("released", (3.5, 0.1))):
        preprocessor = kzoo.BartDenoisingPreprocessor(
            tokenizer, sequence_length=96, recipe=recipe,
            sentence_permutation=False, seed=7)
        preprocessor._ensure_setup()
        rng = np.random.default_rng(7)
        table = tokenizer.word_start_table()
        pool = np.setdiff1d(np.arange(tokenizer.vocabulary_size),
                            tokenizer.special_token_ids)
        for ids in passages[:40]:
            expected = text_infilling(
                ids, rng, MASK, word_starts=table[ids], noise_density=0.3,
                poisson_lambda=lam, random_token_ratio=ratio,
                random_token_ids=pool)
            noised = preprocessor.noise(ids)
            np.testing.assert_array_equal(noised, expected)
            if recipe == "paper":
                assert _reconstructs(ids, noised, MASK)
            else:
                random_spans += not _reconstructs(ids, noised, MASK)
    # The released recipe's random tokens show (seeded: 40 texts, ~5 spans
    # each, one in ten random).
    assert random_spans > 0

    # An argument given wins over its recipe's value; the config keeps the
    # recipe and what was given, so another recipe changes the rest.
    mixed = kzoo.BartDenoisingPreprocessor(
        tokenizer, sequence_length=96, recipe="released", poisson_lambda=4.0)
    assert (mixed.poisson_lambda, mixed.random_token_ratio) == (4.0, 0.1)
    config = mixed.get_config()
    assert (config["recipe"], config["poisson_lambda"],
            config["random_token_ratio"]) == ("released", 4.0, None)
    again = kzoo.BartDenoisingPreprocessor.from_config(config)
    assert (again.poisson_lambda, again.random_token_ratio) == (4.0, 0.1)
    paper_again = kzoo.BartDenoisingPreprocessor.from_config(
        {**released.get_config(), "recipe": "paper"})
    assert (paper_again.poisson_lambda,
            paper_again.random_token_ratio) == (3.0, 0.0)
    with pytest.raises(ValueError, match="Unknown recipe 'relased'.*"
                                         "Did you mean 'released'"):
        kzoo.BartDenoisingPreprocessor(tokenizer, recipe="relased")
