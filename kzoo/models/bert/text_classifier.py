"""BERT for text (and text-pair) classification."""

import keras

from kzoo.models.bert.backbone import BertBackbone, bert_kernel_initializer
from kzoo.models.bert.masked_lm import task_inputs
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models import classification
from kzoo.models.classification import SINGLE_LABEL, check_problem_type
from kzoo.models.registry import register
from kzoo.models.task import Task


@register
class BertTextClassifier(Task):
    """pooled output -> dropout -> dense(num_classes) logits.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence-pair tasks (entailment, paraphrase).

    Args:
        backbone: a `BertBackbone`.
        num_classes: number of labels.
        preprocessor: a `BertPreprocessor`, or None to feed input dicts.
        dropout: dropout before the classifier; None uses the backbone's.
        problem_type: "single_label_classification" (integer labels,
            softmax), "multi_label_classification" (0/1 labels of width
            `num_classes`, sigmoid) or "regression" (`num_classes` real
            targets, MSE), as Hugging Face's `problem_type`.

    Example:
    ```python
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_base", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPreprocessor

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, **kwargs):
        check_problem_type(problem_type, num_classes, type(self).__name__)
        dropout = backbone.dropout if dropout is None else float(dropout)
        # === Layers ===
        dropout_layer = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        classifier = keras.layers.Dense(
            num_classes, kernel_initializer=bert_kernel_initializer(
                backbone.initializer_range),
            dtype=backbone.dtype_policy, name="classifier")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone, ())
        pooled = backbone(backbone_inputs)["pooled_output"]
        logits = classifier(dropout_layer(pooled))
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_classes = int(num_classes)
        self.dropout = dropout
        self.problem_type = problem_type

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout,
                "problem_type": self.problem_type}

    def default_compile_args(self):
        return classification.compile_args(self.problem_type,
                                           learning_rate=5e-5)
