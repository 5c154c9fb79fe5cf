"""DistilBERT for text (and text-pair) classification."""

from kzoo.core.classification import SINGLE_LABEL
from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.preprocessor import DistilBertPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class DistilBertTextClassifier(SequenceClassifier):
    """The original's classification head (Hugging Face's
    `DistilBertForSequenceClassification`): `[CLS]`'s vector -> dense +
    ReLU (`classifier_dense`, the original's `pre_classifier`) -> dropout
    -> dense(num_classes) (`classifier`). Unlike RoBERTa's head, there is
    no dropout before the dense layer.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence pairs.

    Args:
        backbone: a `DistilBertBackbone`.
        num_classes: number of labels (outputs, for regression).
        preprocessor: a `DistilBertPreprocessor`, or None to feed input
            dicts.
        dropout: the head's dropout; None: the original's
            `seq_classif_dropout` (0.2), not the backbone's `dropout` (a
            `kzoo.TokenClassifier` on DistilBERT takes that one, as
            `DistilBertForTokenClassification`).
        problem_type: see `kzoo.tasks.task_wiring.SequenceClassifier`.

    Example:
    ```python
    backbone = kzoo.DistilBertBackbone.from_preset(
        "distil_bert_base", load_weights=False, num_layers=1, num_heads=2,
        hidden_dim=64, intermediate_dim=128)
    classifier = kzoo.DistilBertTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.DistilBertPreprocessor.from_preset(
            "distil_bert_base", sequence_length=16))
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2)
    # kzoo.DistilBertTextClassifier.from_preset("distil_bert_base",
    # num_classes=2) starts from the released encoder.
    ```
    """

    backbone_cls = DistilBertBackbone
    preprocessor_cls = DistilBertPreprocessor
    hidden_activation = "relu"
    dropout_before_hidden = False
    head_dropout = 0.2  # DistilBertConfig's `seq_classif_dropout`

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, **kwargs):
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout, problem_type=problem_type, **kwargs)

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["sequence_output"][:, 0, :]  # [CLS]
