"""Entity-level precision, recall and F1 of tag sequences (CoNLL-2000's
`conlleval` semantics), through `seqeval`, the library the CoNLL scores
of `transformers`' examples come from."""


def entity_scores(true_tags, predicted_tags, scheme=None):
    """Micro-averaged entity precision, recall and F1, and per entity type.

    Args:
        true_tags, predicted_tags: lists (one per sentence) of tag lists
            ("O", "B-PER", "I-PER", ...), of equal lengths.
        scheme: None for `conlleval`'s lenient BIO reading (an "I-X" after
            "O" starts an entity, as CoNLL scores it), or "IOB2" / "IOBES"
            (seqeval's strict mode: only well-formed entities count).

    Returns:
        `{"precision", "recall", "f1", "per_type": {type: {...}}}`.

    Example:
    ```python
    kzoo.metrics.entity_scores([["B-PER", "I-PER", "O"]],
                               [["B-PER", "I-PER", "O"]])["f1"]  # 1.0
    ```
    """
    from seqeval import metrics, scheme as schemes
    if len(true_tags) != len(predicted_tags) or any(
            len(t) != len(p) for t, p in zip(true_tags, predicted_tags)):
        raise ValueError(
            "entity_scores: true_tags and predicted_tags must hold the same "
            "sentences with one tag per word each; their lengths differ.")
    kwargs = {}
    if scheme is not None:
        known = {"IOB2": schemes.IOB2, "IOBES": schemes.IOBES,
                 "BIOES": schemes.IOBES, "BIO": schemes.IOB2}
        if scheme not in known:
            raise ValueError(f"entity_scores: scheme must be None or one of "
                             f"{sorted(known)}; got {scheme!r}.")
        kwargs = {"mode": "strict", "scheme": known[scheme]}
    report = metrics.classification_report(
        true_tags, predicted_tags, output_dict=True, zero_division=0,
        **kwargs)
    per_type = {name: {"precision": float(v["precision"]),
                       "recall": float(v["recall"]),
                       "f1": float(v["f1-score"]),
                       "support": int(v["support"])}
                for name, v in report.items() if not name.endswith(" avg")}
    micro = report.get("micro avg", {"precision": 0.0, "recall": 0.0,
                                     "f1-score": 0.0})
    return {"precision": float(micro["precision"]),
            "recall": float(micro["recall"]),
            "f1": float(micro["f1-score"]), "per_type": per_type}
