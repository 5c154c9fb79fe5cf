"""The bundled tasks hold what their docstrings say: kzoo.datasets'
word-order task keeps every word of its passage and changes only the
order of one stretch."""

from collections import Counter

import pytest

from kzoo import datasets

pytestmark = pytest.mark.once


def test_word_order_task_shuffles_one_stretch_and_keeps_the_words():
    (train_x, train_y), (test_x, test_y) = datasets.austen_word_order(
        per_novel=60, scrambled_words=12, test_fraction=0.5, seed=3)
    (source_train, _), (source_test, _), _ = datasets.austen_authorship(
        ("northanger_abbey", "persuasion"), per_novel=60, test_fraction=0.5,
        seed=3)
    assert (len(train_x), len(test_x)) == (60, 60)
    assert train_y.sum() == 30 and test_y.sum() == 30
    for texts, labels, sources in ((train_x, train_y, source_train),
                                   (test_x, test_y, source_test)):
        for text, label, source in zip(texts, labels, sources):
            words, original = text.split(), source.split()
            assert Counter(words) == Counter(original)
            moved = [i for i, (a, b) in enumerate(zip(words, original))
                     if a != b]
            if label == 1:
                assert not moved
            else:
                # At least half of the 12 moved, all inside one stretch
                # of 12 (repeated words can hide a move, hence >= 5).
                assert len(moved) >= 5 and moved[-1] - moved[0] < 12


def test_word_order_task_refuses_a_stretch_longer_than_the_passage():
    with pytest.raises(ValueError, match="scrambled_words=60 must be "
                       "between 2 and words=48"):
        datasets.austen_word_order(scrambled_words=60)
