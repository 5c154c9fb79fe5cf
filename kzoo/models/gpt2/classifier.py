"""GPT-2 for text (and text-pair) classification, the GPT recipe."""

import keras
from keras import ops

from kzoo.models.gpt2.backbone import GPT2Backbone, gpt2_kernel_initializer
from kzoo.models.gpt2.causal_lm import gpt2_task_inputs
from kzoo.models.gpt2.preprocessor import GPT2Preprocessor
from kzoo.models import classification
from kzoo.models.classification import SINGLE_LABEL, check_problem_type
from kzoo.models.registry import register
from kzoo.models.task import Task


class LastTokenPooling(keras.layers.Layer):
    """`(batch, seq, hidden)`, `padding_mask (batch, seq)` -> the hidden
    state of each row's last real token, `(batch, hidden)`.

    Padding must be on the right (as kzoo's preprocessors pad). A causal
    decoder's last token is the only one that has read the whole text,
    which is why GPT classifies from it rather than from the first.
    """

    def call(self, hidden_states, padding_mask):
        lengths = ops.sum(ops.cast(padding_mask, "int32"), axis=1)
        last = ops.maximum(lengths - 1, 0)  # (batch,)
        index = ops.reshape(last, (-1, 1, 1))
        return ops.squeeze(
            ops.take_along_axis(hidden_states, index, axis=1), 1)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape):
        return (hidden_states_shape[0], hidden_states_shape[-1])


@register
class GPT2Classifier(Task):
    """last real token's hidden state -> dropout -> dense(num_classes).

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    pairs, which the preprocessor joins with a delimiter token.

    Args:
        backbone: a `GPT2Backbone`.
        num_classes: number of labels.
        preprocessor: a `GPT2Preprocessor`, or None to feed input dicts.
        dropout: before the classifier; None uses the backbone's.
        problem_type: "single_label_classification",
            "multi_label_classification" or "regression" (see
            `kzoo.models.classification`).

    Example:
    ```python
    classifier = kzoo.GPT2Classifier.from_preset(
        "gpt2", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = GPT2Backbone
    preprocessor_cls = GPT2Preprocessor

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, **kwargs):
        check_problem_type(problem_type, num_classes, type(self).__name__)
        dropout = backbone.dropout if dropout is None else float(dropout)
        # === Layers ===
        pooling = LastTokenPooling(name="last_token")
        dropout_layer = keras.layers.Dropout(dropout, name="classifier_dropout")
        # No bias, as Hugging Face's GPT2ForSequenceClassification `score`.
        classifier = keras.layers.Dense(
            num_classes, use_bias=False,
            kernel_initializer=gpt2_kernel_initializer(
                backbone.initializer_range),
            dtype=backbone.dtype_policy, name="classifier")
        # === Functional model ===
        inputs = gpt2_task_inputs(backbone)
        hidden = backbone(inputs)
        pooled = pooling(hidden, inputs["padding_mask"])
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
