"""Next-sentence-prediction pairs from real documents."""

import numpy as np
import pytest

import kzoo
from helpers import AUSTEN_NOVELS, austen_chapters
from kzoo.preprocessing import next_sentence_pairs, split_sentences

# The text pipeline runs in TensorFlow ops on every backend: checked in
# one backend's pass (KZOO_ONCE_BACKEND) only.
pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def documents():
    """Each chapter of both excerpts is a document (a list of sentences)."""
    chapters = [c for novel in AUSTEN_NOVELS for c in austen_chapters(novel)]
    documents = [split_sentences(c) for c in chapters]
    assert len(documents) >= 6
    return documents


def consecutive_pairs(documents):
    return {(d[i], d[i + 1]) for d in documents for i in range(len(d) - 1)}


def documents_of(documents):
    index = {}
    for doc_id, sentences in enumerate(documents):
        for sentence in sentences:
            index.setdefault(sentence, set()).add(doc_id)
    return index


def test_is_next_and_not_next(documents):
    first, second, labels = next_sentence_pairs(documents, seed=0)
    assert len(first) == len(second) == len(labels) == \
        sum(len(d) - 1 for d in documents)
    assert labels.dtype == np.int32 and set(labels.tolist()) == {0, 1}
    assert 0.45 <= np.mean(labels == 0) <= 0.55, np.mean(labels == 0)

    nexts = consecutive_pairs(documents)
    where = documents_of(documents)
    for a, b, label in zip(first, second, labels):
        if label == 0:  # IsNext: b really follows a in the same document
            assert (a, b) in nexts, (a, b)
        else:           # NotNext: b comes from another document
            assert where[b] - where[a], (a, b)


def test_every_sentence_but_the_last_starts_a_pair(documents):
    first, _, _ = next_sentence_pairs(documents, seed=0)
    expected = [s for d in documents for s in d[:-1]]
    assert sorted(first) == sorted(expected)


def test_reproducible_with_a_seed(documents):
    a = next_sentence_pairs(documents, seed=7)
    b = next_sentence_pairs(documents, seed=7)
    c = next_sentence_pairs(documents, seed=8)
    assert a[0] == b[0] and a[1] == b[1]
    np.testing.assert_array_equal(a[2], b[2])
    assert a[1] != c[1]


def test_not_next_rate(documents):
    _, _, labels = next_sentence_pairs(documents, seed=0, not_next_rate=0.2)
    assert 0.15 <= np.mean(labels == 1) <= 0.25


def test_documents_as_strings(documents):
    chapters = [" ".join(d) for d in documents]
    first, second, labels = next_sentence_pairs(chapters, seed=0)
    assert len(first) > 100
    nexts = consecutive_pairs(documents)
    assert all((a, b) in nexts
               for a, b, label in zip(first, second, labels) if label == 0)


def test_fewer_than_two_documents_is_an_error(documents):
    with pytest.raises(ValueError, match="at least two documents"):
        next_sentence_pairs([documents[0]])
    # A one-sentence document cannot give a pair, so it does not count.
    with pytest.raises(ValueError, match="at least two documents"):
        next_sentence_pairs([documents[0], ["Only one sentence here."]])


def test_split_sentences():
    text = ('"My dear Mr. Bennet," said his lady. Mr. Bennet replied that '
            'he had not. "But it is," returned she! Is it?')
    sentences = split_sentences(text)
    assert sentences[-1] == '"But it is," returned she!'
    assert all(len(s.split()) >= 3 for s in sentences)


def test_exported_from_kzoo():
    assert kzoo.preprocessing.next_sentence_pairs is next_sentence_pairs


# ----------------------------------------------------------------------
# Sentence-order prediction (ALBERT)
# ----------------------------------------------------------------------
def test_sentence_order_pairs_swap_half(documents):
    from kzoo.preprocessing import sentence_order_pairs
    first, second, labels = sentence_order_pairs(documents, seed=0)
    assert len(first) == len(second) == len(labels) == \
        sum(len(d) - 1 for d in documents)
    assert labels.dtype == np.int32 and set(labels.tolist()) == {0, 1}
    # 50% swapped: within 3 standard deviations of a fair coin.
    n = len(labels)
    assert abs(np.mean(labels == 1) - 0.5) <= 3 * np.sqrt(0.25 / n), \
        (np.mean(labels), n)
    nexts = consecutive_pairs(documents)
    for a, b, label in zip(first, second, labels):
        if label == 0:  # in order: b follows a in the same document
            assert (a, b) in nexts, (a, b)
        else:           # swapped: the consecutive pair, reversed
            assert (b, a) in nexts, (a, b)
    # In order, walking the documents; reproducible from the seed.
    expected = [pair for d in documents for pair in zip(d, d[1:])]
    got = [(a, b) if label == 0 else (b, a)
           for a, b, label in zip(first, second, labels)]
    assert got == expected
    again = sentence_order_pairs(documents, seed=0)
    assert again[0] == first and (again[2] == labels).all()


def test_sentence_order_pairs_rates_and_bad_input():
    from kzoo.preprocessing import sentence_order_pairs
    text = "One sentence here. Then another one. And a third one."
    assert sentence_order_pairs([text], swap_rate=0.0)[2].tolist() == [0, 0]
    first, second, labels = sentence_order_pairs([text], swap_rate=1.0)
    assert labels.tolist() == [1, 1]
    assert (first[0], second[0]) == ("Then another one.",
                                     "One sentence here.")
    with pytest.raises(ValueError, match="at least one document with two"):
        sentence_order_pairs(["Only one sentence here."])
    with pytest.raises(ValueError, match=r"swap_rate must be in \[0, 1\]"):
        sentence_order_pairs([text], swap_rate=1.5)
