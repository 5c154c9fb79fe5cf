"""Task pieces every family shares: functional inputs, the masked-LM head
and its training defaults, and the sequence-classifier task.

A family's task is then configuration: which backbone output a classifier
reads (`pool`), how its dense layer is initialised, whether it has a bias.
"""

import keras

from kzoo.layers import MaskedLMHead
from kzoo.models import classification, labels
from kzoo.models.arguments import FRACTION, Optional
from kzoo.models.classification import SINGLE_LABEL, check_problem_type
from kzoo.models.task import Task
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss


def task_inputs(backbone, extra_names=()):
    """Fresh functional inputs for the backbone plus the task's own.

    Returns `(inputs, backbone_inputs)`: every input by name, and the
    subset the backbone takes.
    """
    names = tuple(backbone.input_names) + tuple(extra_names)
    inputs = {name: keras.Input((None,), dtype="int32", name=name)
              for name in names}
    return inputs, {name: inputs[name] for name in backbone.input_names}


# ----------------------------------------------------------------------
# Masked LM
# ----------------------------------------------------------------------
def masked_lm_head(backbone):
    """BERT's MLM head (dense + activation + LayerNorm, logits through the
    tied token embedding plus a bias), configured from the backbone."""
    return MaskedLMHead(
        backbone.token_embedding,
        activation=backbone.activation,
        layer_norm_epsilon=backbone.layer_norm_epsilon,
        kernel_initializer=backbone.kernel_initializer(),
        dtype=backbone.dtype_policy,
        name="mlm_head",
    )


def masked_lm_compile_args(learning_rate):
    """AdamW with the warmup/decay schedule; the loss and accuracy over
    the real masked tokens only."""
    return {
        "optimizer": default_optimizer(learning_rate),
        # Averaged over the real masked tokens, as BERT and transformers do.
        "loss": token_loss(),
        "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy()],
    }


# ----------------------------------------------------------------------
# Sequence classification
# ----------------------------------------------------------------------
class SequenceClassifier(Task):
    """A vector per text (the family's `pool`) -> dropout ->
    dense(num_classes), for classification, multi-label classification or
    regression (`problem_type`, see `kzoo.models.classification`).

    Subclasses set `backbone_cls`/`preprocessor_cls`, `classifier_use_bias`
    and implement `pool(inputs, backbone_outputs)`; the classifier's kernel
    starts from the backbone's `kernel_initializer()`.

    Args:
        backbone: the family's backbone.
        num_classes: number of labels (outputs, for regression).
        preprocessor: the family's preprocessor, or None to feed input
            dicts.
        dropout: dropout before the classifier; None uses the backbone's.
        problem_type: "single_label_classification" (integer labels),
            "multi_label_classification" (0/1 labels of width
            `num_classes`) or "regression" (real targets).
    """

    classifier_use_bias = True
    # Checked before __init__ (kzoo.models.arguments); num_classes and
    # problem_type by check_problem_type, whose messages say more.
    argument_spec = {"dropout": Optional(FRACTION)}

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, **kwargs):
        check_problem_type(problem_type, num_classes, type(self).__name__)
        dropout = backbone.dropout if dropout is None else float(dropout)
        # === Layers ===
        dropout_layer = keras.layers.Dropout(
            dropout, dtype=backbone.dtype_policy, name="classifier_dropout")
        classifier = keras.layers.Dense(
            num_classes, use_bias=self.classifier_use_bias,
            kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="classifier")
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone,
                                              self.extra_input_names)
        pooled = self.pool(inputs, backbone(backbone_inputs))
        logits = classifier(dropout_layer(pooled))  # (batch, num_classes)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        # === Config ===
        self.num_classes = int(num_classes)
        self.dropout = dropout
        self.problem_type = problem_type

    def pool(self, inputs, backbone_outputs):
        """`(batch, hidden)`: the one vector the classifier reads."""
        raise NotImplementedError

    def task_config(self):
        return {"num_classes": self.num_classes, "dropout": self.dropout,
                "problem_type": self.problem_type}

    def default_compile_args(self):
        return classification.compile_args(self.problem_type,
                                           learning_rate=5e-5)

    def label_spec(self):
        return labels.for_problem_type(self.problem_type, self.num_classes)
