"""Sentence pairs for the sentence-level pretraining tasks.

Next-sentence prediction (BERT), labels as the original checkpoints (and
Hugging Face): 0 = the second sentence really follows the first
("IsNext"), 1 = it is a random sentence from another document ("NotNext").

Sentence-order prediction (ALBERT), labels as Hugging Face's
`AlbertForPreTraining`: 0 = two consecutive sentences of one document in
their order, 1 = the same two swapped.
"""

import re

import numpy as np

IS_NEXT = 0
NOT_NEXT = 1
IN_ORDER = 0
SWAPPED = 1

# Where a sentence ends, then the closing quotes or brackets after it:
# - ASCII . ! ? followed by whitespace (so "3.5" and "a.m." inside a
#   sentence stay whole; an abbreviation such as "Mr." before a space
#   still ends one: good enough for prose such as the bundled novels);
# - the full stops and question/exclamation marks of scripts that mark
#   sentences with their own characters, whatever follows (CJK text puts
#   no space after them): CJK 。！？ and halfwidth ｡, Arabic ؟ and Urdu
#   ۔, Devanagari । ॥, Ethiopic ። ፧ ፨, Armenian ։, Myanmar ။, Khmer ។.
_CLOSERS = "\"'\u2019\u201d\u00bb)\\]}\u300d\u300f\u3011\uff09\uff3d"
_OWN_STOPS = ("\u3002\uff01\uff1f\uff61\u061f\u06d4\u0964\u0965"
              "\u1362\u1367\u1368\u0589\u104b\u17d4")
_SENTENCE_END = re.compile(
    rf"[.!?][{_CLOSERS}]*(?=\s)|[{_OWN_STOPS}][{_CLOSERS}]*")
# A word, for `min_words`: a run of non-space characters with a letter or
# digit in it, or one character of a script written without spaces (Han,
# kana); punctuation alone is none.
_CJK = "\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff"
_WORD = re.compile(rf"[{_CJK}]|[^\s{_CJK}]*\w[^\s{_CJK}]*")


def split_sentences(text, min_words=3):
    """Split prose into sentences, dropping fragments under `min_words`.

    Whitespace is collapsed to single spaces first (the text is running
    prose: line breaks inside a paragraph are not kept). A sentence ends
    after `.`, `!` or `?` and a space, or after a script's own full stop
    or question mark (CJK `。！？`, Arabic `؟`, Devanagari `।`, Amharic
    `።`, ...), closing quotes and brackets included. A word is a run of
    non-space characters with a letter or digit, or one Han or kana
    character.

    Example:
    ```python
    from kzoo import preprocessing
    assert preprocessing.split_sentences(
        "It rained all day. We stayed in. The end came at last.",
        min_words=4) == ["It rained all day.", "The end came at last."]
    assert preprocessing.split_sentences(
        "密码已使用。请选择其他密码。", min_words=1) == [
        "密码已使用。", "请选择其他密码。"]
    ```
    """
    text = " ".join(text.split())
    cuts = [0] + [end.end() for end in _SENTENCE_END.finditer(text)]
    sentences = [text[a:b].strip() for a, b in zip(cuts, cuts[1:] + [None])]
    return [s for s in sentences
            if s and len(_WORD.findall(s)) >= min_words]


def next_sentence_pairs(documents, seed=None, not_next_rate=0.5):
    """Build (first, second, label) sentence pairs from documents.

    Args:
        documents: a list of documents; each a list of sentences, or a
            string that `split_sentences` splits.
        seed: seed of the random choices (pairs are reproducible).
        not_next_rate: share of pairs whose second sentence comes from a
            different document.

    Returns:
        `(first, second, labels)`: two lists of strings and an int32 array.

    Example:
    ```python
    from kzoo import datasets, preprocessing
    first, second, labels = preprocessing.next_sentence_pairs(
        datasets.austen_paragraphs("emma")[:20], seed=0)
    assert len(first) == len(second) == len(labels)
    assert set(labels.tolist()) == {0, 1}   # 0: IsNext, 1: NotNext
    ```
    """
    documents = _sentence_documents(documents)
    if len(documents) < 2:
        raise ValueError(
            "next_sentence_pairs needs at least two documents with two or "
            "more sentences each (random pairs come from another document).")
    rng = np.random.default_rng(seed)
    first, second, labels = [], [], []
    for doc_index, sentences, i in _consecutive(documents):
        first.append(sentences[i])
        if rng.random() < not_next_rate:
            other = int(rng.integers(len(documents) - 1))
            other += other >= doc_index  # any document but this one
            pool = documents[other]
            second.append(pool[int(rng.integers(len(pool)))])
            labels.append(NOT_NEXT)
        else:
            second.append(sentences[i + 1])
            labels.append(IS_NEXT)
    return first, second, np.asarray(labels, dtype="int32")


def sentence_order_pairs(documents, seed=None, swap_rate=0.5):
    """Build (first, second, label) pairs for ALBERT's sentence-order
    prediction: every two consecutive sentences of a document, swapped
    with probability `swap_rate`.

    Unlike next-sentence pairs, both sentences always come from the same
    document, so the task is about order (coherence), not topic.

    Args:
        documents: a list of documents; each a list of sentences, or a
            string that `split_sentences` splits.
        seed: seed of the random choices (pairs are reproducible).
        swap_rate: share of pairs given in reversed order.

    Returns:
        `(first, second, labels)`: two lists of strings and an int32 array,
        labels 0 (in order) or 1 (swapped).

    Example:
    ```python
    first, second, labels = kzoo.preprocessing.sentence_order_pairs(
        ["One sentence here. Then another one. And a third one."], seed=0)
    ```
    """
    documents = _sentence_documents(documents)
    if not documents:
        raise ValueError(
            "sentence_order_pairs needs at least one document with two or "
            "more sentences (each pair is two consecutive sentences).")
    if not 0.0 <= swap_rate <= 1.0:
        raise ValueError(
            f"sentence_order_pairs: swap_rate must be in [0, 1] (the share "
            f"of swapped pairs); got {swap_rate!r}.")
    rng = np.random.default_rng(seed)
    first, second, labels = [], [], []
    for _, sentences, i in _consecutive(documents):
        a, b = sentences[i], sentences[i + 1]
        if rng.random() < swap_rate:
            a, b = b, a
            labels.append(SWAPPED)
        else:
            labels.append(IN_ORDER)
        first.append(a)
        second.append(b)
    return first, second, np.asarray(labels, dtype="int32")


def _sentence_documents(documents):
    """Documents as lists of sentences, those with fewer than two left
    out (they make no pair)."""
    documents = [split_sentences(d) if isinstance(d, str) else list(d)
                 for d in documents]
    return [d for d in documents if len(d) >= 2]


def _consecutive(documents):
    """(document index, its sentences, i) for every pair of consecutive
    sentences i, i + 1, in order."""
    for doc_index, sentences in enumerate(documents):
        for i in range(len(sentences) - 1):
            yield doc_index, sentences, i
