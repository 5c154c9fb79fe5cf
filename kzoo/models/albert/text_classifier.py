"""ALBERT for text (and text-pair) classification."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.preprocessor import AlbertPreprocessor
from kzoo.models.classification import SINGLE_LABEL
from kzoo.models.registry import register
from kzoo.models.task_wiring import SequenceClassifier


@register
class AlbertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes), as Hugging Face's
    `AlbertForSequenceClassification`.

    The dropout is the original's `classifier_dropout_prob` (0.1), not the
    backbone's hidden dropout (0 in ALBERT v2). Fit on raw strings with
    integer labels; pass `(texts_a, texts_b)` for sentence pairs.
    Arguments: see `kzoo.models.task_wiring.SequenceClassifier`.

    Example:
    ```python
    classifier = kzoo.AlbertTextClassifier.from_preset(
        "albert_base_en_uncased", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertPreprocessor

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=0.1,
                 problem_type=SINGLE_LABEL, **kwargs):
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout, problem_type=problem_type, **kwargs)

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]  # tanh(dense([CLS]))
