"""BART's noising (Lewis et al., 2020, section 2.2), as fairseq's
`DenoisingDataset` applies it for BART's pretraining: text infilling and
sentence permutation, and token deletion (one of the paper's other
noising schemes).

Text infilling: `noise_density` (30%) of the words are noised, in spans
whose lengths (in words) are drawn from Poisson(`poisson_lambda` = 3) until
the budget `ceil(density * words)` is reached (the last span cut to fit).
The defaults are the paper's description (section 2.2: lambda 3, every
span a `<mask>`); the released `bart.large` was pretrained with lambda 3.5
and one span in ten replaced by a random token instead
(`random_token_ratio=0.1`, fairseq's `--mask-random`):
`kzoo.BartDenoisingPreprocessor(recipe="released")` sets both.
Each span becomes a single `<mask>` (its first token is replaced, the rest
deleted), so the model must also learn how many tokens are missing; a span
of length 0 inserts a `<mask>` at a random place. Spans start at random
distinct words; a span starting inside another is swallowed by it, as in
fairseq.

    tokens: The cat sat on the mat and purred .
    noised: The <mask> on the mat <mask> purred .     (spans of 2 and 1)

Sentence permutation: the text's sentences (split after the sentence-end
tokens) are shuffled.

Token deletion: `ceil(deletion_rate * tokens)` tokens, chosen uniformly
at random, are removed and the rest keep their order; unlike a mask,
nothing marks where, so the model must find the missing positions too
(fairseq: `--mask-length subword --replace-length 0`).

    tokens: The cat sat on the mat and purred .
    noised: The cat on the mat and .                   (2 of 9 deleted)

Family-independent numpy on one text's token ids (no `<s>`/`</s>`); the
word starts come from a tokenizer's `word_start_table()`, the mask id from
its `mask_token_id`. `kzoo.BartDenoisingPreprocessor` applies them in
`tf.data`, fresh noise every epoch.
"""

import math

import numpy as np


def infilling_spans(num_words, rng, noise_density=0.3, poisson_lambda=3.0):
    """The spans of text infilling over `num_words` words: `(starts,
    lengths, num_inserts)`: distinct start words, span lengths (>= 1, in
    words) and the number of zero-length spans (inserted masks). The
    lengths of all spans drawn, zeros included, sum to `ceil(noise_density
    * num_words)`.

    Example:
    ```python
    from kzoo import preprocessing
    rng = np.random.default_rng(0)
    starts, lengths, num_inserts = preprocessing.infilling_spans(
        100, rng, noise_density=0.3)
    assert lengths.sum() == 30 and len(starts) == len(lengths)  # 30% of words
    ```
    """
    budget = int(math.ceil(num_words * noise_density))
    if budget == 0:
        return np.zeros(0, "int64"), np.zeros(0, "int64"), 0
    lengths = rng.poisson(poisson_lambda, budget)
    while lengths.sum() < budget:  # (rare) draw more until it covers
        lengths = np.concatenate([lengths,
                                  rng.poisson(poisson_lambda, budget)])
    cumulative = np.cumsum(lengths)
    last = int(np.searchsorted(cumulative, budget))  # first reaching it
    lengths = lengths[:last + 1].copy()
    lengths[last] = budget - (cumulative[last - 1] if last else 0)
    num_inserts = int((lengths == 0).sum())
    lengths = lengths[lengths > 0]
    starts = np.sort(rng.choice(num_words, size=len(lengths),
                                replace=False))
    # Which drawn length goes with which start is itself random.
    return starts, rng.permutation(lengths), num_inserts


def text_infilling(token_ids, rng, mask_token_id, word_starts=None,
                   noise_density=0.3, poisson_lambda=3.0,
                   random_token_ratio=0.0, random_token_ids=None):
    """One text's token ids with text infilling applied (see the module
    doc).

    Args:
        token_ids: 1-D ints, the text alone (no special tokens).
        rng: a `np.random.Generator`.
        mask_token_id: the id that replaces each span.
        word_starts: 1-D bools, True at tokens that begin a word (None:
            every token is a word); the first token always begins one.
        noise_density, poisson_lambda: the share of words noised and the
            mean span length.
        random_token_ratio: the share of spans replaced by a random token
            (from `random_token_ids`) instead of `<mask>` (fairseq's
            `mask_random`; 0 in the paper's description, 0.1 in the
            released bart.large's pretraining).

    Returns:
        The noised token ids (1-D int64).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    ids = np.asarray(tokenizer("The cat sat on the mat and purred loudly."))
    noised = preprocessing.text_infilling(
        ids, np.random.default_rng(0), tokenizer.mask_token_id,
        word_starts=tokenizer.word_start_table()[ids])
    print(tokenizer.detokenize(noised))   # spans of words -> one [MASK]
    kept = noised[noised != tokenizer.mask_token_id]
    assert len(kept) < len(ids) and np.isin(kept, ids).all()
    ```
    """
    ids = np.asarray(token_ids, "int64").reshape(-1)
    if ids.size == 0:
        return ids
    starts_at = (np.ones(ids.size, bool) if word_starts is None
                 else np.asarray(word_starts, bool).reshape(-1).copy())
    if starts_at.shape != ids.shape:
        raise ValueError(f"word_starts has {starts_at.size} entries for "
                         f"{ids.size} tokens; give one per token.")
    starts_at[0] = True
    word_of = np.cumsum(starts_at) - 1         # (tokens,) word index
    first_token = np.flatnonzero(starts_at)    # (words,) token index
    num_words = first_token.size
    span_starts, lengths, num_inserts = infilling_spans(
        num_words, rng, noise_density, poisson_lambda)

    # Each span keeps its first token (to become the mask) and deletes
    # the rest; a span's head inside another span is deleted with it.
    delete = np.zeros(ids.size, bool)
    heads = first_token[span_starts]
    for start, length in zip(span_starts, lengths):
        in_span = (word_of >= start) & (word_of < start + length)
        in_span[first_token[start]] = False
        delete |= in_span
    replacement = _replacements(len(heads), rng, mask_token_id,
                                random_token_ratio, random_token_ids)
    noised = ids.copy()
    noised[heads] = replacement
    noised = noised[~delete]
    if num_inserts:
        # Zero-length spans: a mask at random places of the result.
        total = noised.size + num_inserts
        at = np.sort(rng.choice(total, size=num_inserts, replace=False))
        inserted = np.zeros(total, bool)
        inserted[at] = True
        out = np.empty(total, "int64")
        out[inserted] = _replacements(num_inserts, rng, mask_token_id,
                                      random_token_ratio, random_token_ids)
        out[~inserted] = noised
        noised = out
    return noised


def _replacements(count, rng, mask_token_id, random_token_ratio,
                  random_token_ids):
    values = np.full(count, mask_token_id, "int64")
    if random_token_ratio > 0 and count:
        if random_token_ids is None or len(random_token_ids) == 0:
            raise ValueError("random_token_ratio > 0 needs random_token_ids "
                             "(the ids a span may become).")
        chosen = rng.random(count) < random_token_ratio
        values[chosen] = rng.choice(np.asarray(random_token_ids),
                                    size=int(chosen.sum()))
    return values


def token_deletion(token_ids, rng, deletion_rate):
    """One text's token ids with `ceil(deletion_rate * len(token_ids))` of
    them, chosen uniformly at random (no two the same position), deleted;
    the kept ones in their order. As fairseq counts its noise: the share
    rounded up, so any text with a token loses at least one.

    Example:
    ```python
    from kzoo import preprocessing
    rng = np.random.default_rng(0)
    kept = preprocessing.token_deletion(np.arange(100), rng, 0.1)
    assert len(kept) < 100 and (np.diff(kept) > 0).all()   # order kept
    ```
    """
    ids = np.asarray(token_ids, "int64").reshape(-1)
    if not 0 <= deletion_rate < 1:
        raise ValueError(f"deletion_rate must be in [0, 1); got "
                         f"{deletion_rate!r}.")
    count = int(math.ceil(ids.size * deletion_rate))
    if count == 0:
        return ids
    keep = np.ones(ids.size, bool)
    keep[rng.choice(ids.size, size=count, replace=False)] = False
    return ids[keep]


def permute_sentences(token_ids, sentence_ends, rng):
    """`token_ids` with its sentences in a random order: a sentence ends
    after each token where `sentence_ends` is True (a trailing fragment is
    a sentence too).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    ids = np.asarray(tokenizer("It rained. We stayed in. The end."))
    shuffled = preprocessing.permute_sentences(
        ids, ids == tokenizer.token_to_id("."), np.random.default_rng(3))
    print(tokenizer.detokenize(shuffled))
    # the end . we stayed in . it rained .
    assert sorted(shuffled) == sorted(ids)
    ```
    """
    ids = np.asarray(token_ids, "int64").reshape(-1)
    ends = np.flatnonzero(np.asarray(sentence_ends, bool).reshape(-1)) + 1
    bounds = np.unique(np.concatenate([[0], ends, [ids.size]]))
    sentences = [ids[a:b] for a, b in zip(bounds[:-1], bounds[1:])]
    if len(sentences) < 2:
        return ids
    order = rng.permutation(len(sentences))
    return np.concatenate([sentences[i] for i in order])
