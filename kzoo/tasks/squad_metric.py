"""SQuAD's exact match and F1, with the official evaluation scripts'
normalisation (v1.1 and v2.0 normalise the same way): lowercase, remove
punctuation (Python's `string.punctuation`), remove the articles "a",
"an", "the" as whole words, and collapse whitespace. F1 is over the bag
of normalised tokens; against several gold answers an example scores its
best. In v2.0 an unanswerable question has gold [""]: only the empty
prediction scores 1 (both metrics)."""

import collections
import re
import string

_PUNCTUATION = set(string.punctuation)
_ARTICLES = re.compile(r"\b(a|an|the)\b", re.UNICODE)


def normalize_answer(text):
    """The official `normalize_answer`: lower, drop punctuation, drop
    articles, fix whitespace (in the script's order, which matters:
    "the-end" -> "theend", which keeps its "the")."""
    text = text.lower()
    text = "".join(c for c in text if c not in _PUNCTUATION)
    text = _ARTICLES.sub(" ", text)
    return " ".join(text.split())


def exact_match(prediction, gold):
    return float(normalize_answer(prediction) == normalize_answer(gold))


def f1(prediction, gold):
    predicted = normalize_answer(prediction).split()
    expected = normalize_answer(gold).split()
    if not predicted or not expected:
        # v2.0: empty vs empty is 1, empty vs anything else 0.
        return float(predicted == expected)
    common = collections.Counter(predicted) & collections.Counter(expected)
    overlap = sum(common.values())
    if overlap == 0:
        return 0.0
    precision = overlap / len(predicted)
    recall = overlap / len(expected)
    return 2 * precision * recall / (precision + recall)


def squad_scores(predictions, golds):
    """Mean EM and F1, in percent, as the official script reports them.

    Args:
        predictions: one answer text per question ("" for no answer).
        golds: per question, the gold answer texts (a string or a list;
            [] or [""] for an unanswerable question).

    Returns `{"exact_match": float, "f1": float}`.

    Example:
    ```python
    scores = kzoo.squad_scores(["Mr. Darcy", "noon"],
                               [["Darcy", "Mr. Darcy"], ["at noon"]])
    assert scores["exact_match"] == 50.0   # the first matches exactly
    assert 50.0 < scores["f1"] < 100.0     # the second shares "noon"
    ```
    """
    predictions, golds = list(predictions), list(golds)
    if len(predictions) != len(golds):
        raise ValueError(
            f"squad_scores: {len(predictions)} predictions for "
            f"{len(golds)} questions; give one per question.")
    if not golds:
        raise ValueError("squad_scores: no questions to score.")
    em = f = 0.0
    for prediction, gold in zip(predictions, golds):
        gold = [gold] if isinstance(gold, str) else list(gold)
        gold = [g for g in gold if normalize_answer(g)] or [""]
        em += max(exact_match(prediction, g) for g in gold)
        f += max(f1(prediction, g) for g in gold)
    return {"exact_match": 100.0 * em / len(golds),
            "f1": 100.0 * f / len(golds)}
