"""Next-sentence prediction pairs (BERT's second pretraining task).

Labels follow the original checkpoints (and Hugging Face):
0 = the second sentence really follows the first ("IsNext"),
1 = it is a random sentence from another document ("NotNext").
"""

import re

import numpy as np

IS_NEXT = 0
NOT_NEXT = 1

# A sentence ends at . ! or ? (optionally closed by quotes/brackets) followed
# by whitespace; good enough for prose such as the bundled novels.
_SENTENCE_END = re.compile(r"(?<=[.!?])[\"'\)\]]*\s+")


def split_sentences(text, min_words=3):
    """Split prose into sentences, dropping fragments under `min_words`."""
    text = " ".join(text.split())
    sentences = [s.strip() for s in _SENTENCE_END.split(text)]
    return [s for s in sentences if len(s.split()) >= min_words]


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
    """
    documents = [split_sentences(d) if isinstance(d, str) else list(d)
                 for d in documents]
    documents = [d for d in documents if len(d) >= 2]
    if len(documents) < 2:
        raise ValueError(
            "next_sentence_pairs needs at least two documents with two or "
            "more sentences each (random pairs come from another document).")
    rng = np.random.default_rng(seed)
    first, second, labels = [], [], []
    for doc_index, sentences in enumerate(documents):
        for i in range(len(sentences) - 1):
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
