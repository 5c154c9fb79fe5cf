"""Start/end logits of every window -> one answer per example: the n-best
span search of the original BERT's SQuAD code, answers as character spans
of the original context, and SQuAD 2.0's "no answer"."""

import numpy as np


def best_answers(start_logits, end_logits, features, n_best=20,
                 max_answer_length=30, null_threshold=None):
    """The best answer span of each example.

    Args:
        start_logits, end_logits: `(windows, sequence_length)` arrays, the
            model's outputs for `features`' windows.
        features: `QuestionAnswererPreprocessor.features(...)`.
        n_best: starts and ends tried per window (the highest-scoring
            ones), and the number of candidates kept per example.
        max_answer_length: longest answer, in tokens.
        null_threshold: None (SQuAD 1.1: always answer), or a float:
            answer "" when the no-answer score (start + end logit of
            position 0, lowest over the windows) exceeds the best span's
            score by more than this (SQuAD 2.0; 0.0 is the usual start).

    Returns one dict per example: `text`, `start`/`end` (characters of the
    context; -1 for no answer), `score` (start + end logit) and
    `candidates` (the `n_best` spans, best first, each a dict like it).
    """
    start_logits = np.asarray(start_logits, "float64")
    end_logits = np.asarray(end_logits, "float64")
    contexts = features["contexts"]
    candidates = [[] for _ in contexts]
    null_scores = [np.inf] * len(contexts)
    for row, example in enumerate(features["example_index"]):
        starts, ends = start_logits[row], end_logits[row]
        offsets = features["offsets"][row]
        null_scores[example] = min(null_scores[example],
                                   starts[0] + ends[0])
        in_context = offsets[:, 1] > offsets[:, 0]
        top_starts = _top(starts, in_context, n_best)
        top_ends = _top(ends, in_context, n_best)
        for s in top_starts:
            for e in top_ends:
                if e < s or e - s + 1 > max_answer_length:
                    continue
                begin, end = int(offsets[s, 0]), int(offsets[e, 1])
                candidates[example].append({
                    "text": contexts[example][begin:end], "start": begin,
                    "end": end, "score": float(starts[s] + ends[e])})
    answers = []
    for example, found in enumerate(candidates):
        found.sort(key=lambda c: -c["score"])
        found = _distinct(found)[:n_best]
        no_answer = {"text": "", "start": -1, "end": -1,
                     "score": float(null_scores[example])}
        best = found[0] if found else no_answer
        if null_threshold is not None and found and \
                null_scores[example] - best["score"] > null_threshold:
            best = no_answer
        answers.append({**best, "candidates": found})
    return answers


def _top(logits, allowed, n):
    """Indexes of the `n` highest `logits` where `allowed`, best first."""
    index = np.flatnonzero(allowed)
    return index[np.argsort(-logits[index], kind="stable")[:n]]


def _distinct(candidates):
    """One candidate per character span (windows overlap: the same span
    is found in several), the best-scoring."""
    seen, kept = set(), []
    for candidate in candidates:
        key = (candidate["start"], candidate["end"])
        if key not in seen:
            seen.add(key)
            kept.append(candidate)
    return kept
