"""What a sequence classifier's outputs mean, shared by every family's
classifier head and converter.

Hugging Face's `*ForSequenceClassification` models carry `problem_type`:

- "single_label_classification": one class per example; integer labels,
  softmax cross-entropy.
- "multi_label_classification": any number of classes per example; 0/1
  labels of width `num_classes`, sigmoid cross-entropy per class.
- "regression": `num_classes` real-valued targets (usually 1, e.g. STS-B),
  mean squared error on the raw outputs.

When `problem_type` is unset, `transformers` treats `num_labels == 1` as
regression; a converted checkpoint follows it, so a regression head never
becomes a one-class softmax (whose loss is always zero).
"""

import keras

from kzoo.training import default_optimizer

SINGLE_LABEL = "single_label_classification"
MULTI_LABEL = "multi_label_classification"
REGRESSION = "regression"
PROBLEM_TYPES = (SINGLE_LABEL, MULTI_LABEL, REGRESSION)


def check_problem_type(problem_type, num_classes, owner):
    """Validate a classifier's `problem_type` / `num_classes` pair."""
    if problem_type not in PROBLEM_TYPES:
        raise ValueError(
            f"{owner}: problem_type must be one of {', '.join(PROBLEM_TYPES)}"
            f"; got {problem_type!r}.")
    if isinstance(num_classes, bool) or not isinstance(num_classes, int) \
            or num_classes < 1:
        raise ValueError(
            f"{owner}: num_classes must be a positive integer; got "
            f"{num_classes!r}.")
    if problem_type == SINGLE_LABEL and num_classes < 2:
        raise ValueError(
            f"{owner}: a single-label classifier needs num_classes >= 2; got "
            f"{num_classes}. A one-output head is a regression head: pass "
            f'problem_type="{REGRESSION}".')


def compile_args(problem_type, learning_rate):
    """The loss and metrics of a classifier head, with the default
    optimizer."""
    if problem_type == REGRESSION:
        loss = keras.losses.MeanSquaredError()
        metrics = [keras.metrics.MeanAbsoluteError(name="mae")]
    elif problem_type == MULTI_LABEL:
        loss = keras.losses.BinaryCrossentropy(from_logits=True)
        # A logit above 0 is a probability above 0.5.
        metrics = [keras.metrics.BinaryAccuracy(threshold=0.0,
                                                name="accuracy")]
    else:
        loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        metrics = [keras.metrics.SparseCategoricalAccuracy(name="accuracy")]
    return {"optimizer": default_optimizer(learning_rate=learning_rate),
            "loss": loss, "metrics": metrics}


def from_hf_config(config):
    """`(num_classes, problem_type)` of a Hugging Face classification
    config, following `transformers`' rules when `problem_type` is unset."""
    labels = config.get("id2label")
    num_classes = len(labels) if labels else int(config.get("num_labels", 2))
    problem_type = config.get("problem_type")
    if problem_type is None:
        problem_type = REGRESSION if num_classes == 1 else SINGLE_LABEL
    if problem_type not in PROBLEM_TYPES:
        raise ValueError(
            f"problem_type {problem_type!r} in the checkpoint's config.json "
            f"is not one of {', '.join(PROBLEM_TYPES)}.")
    return num_classes, problem_type


def hf_config_fields(num_classes, problem_type):
    """The label fields of an exported Hugging Face config."""
    return {
        "id2label": {str(i): f"LABEL_{i}" for i in range(num_classes)},
        "label2id": {f"LABEL_{i}": i for i in range(num_classes)},
        "problem_type": problem_type,
    }
