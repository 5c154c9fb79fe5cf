"""MobileBERT for text (and text-pair) classification."""

from kzoo.core.registry import register
from kzoo.models.mobilebert.backbone import MobileBertBackbone
from kzoo.models.mobilebert.preprocessor import MobileBertPreprocessor
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class MobileBertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes) logits, as Hugging
    Face's `MobileBertForSequenceClassification` (the pooled output is
    `[CLS]`'s vector in the release, whose pooler has no dense layer).

    Fit on raw strings with integer labels; `(texts_a, texts_b)` for
    pairs. Arguments: see `kzoo.tasks.task_wiring.SequenceClassifier`
    (`num_classes`, `dropout`, `problem_type`).

    Example:
    ```python
    # Setup: the example of kzoo.MobileBertTokenizer (tokenizer).
    backbone = kzoo.MobileBertBackbone(
        vocabulary_size=30522, num_layers=1, num_heads=2, hidden_dim=32,
        intermediate_dim=24, embedding_dim=8, bottleneck_dim=16)
    classifier = kzoo.MobileBertTextClassifier(
        backbone, num_classes=2, preprocessor=kzoo.MobileBertPreprocessor(
            tokenizer, sequence_length=32))
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2)
    ```
    """

    backbone_cls = MobileBertBackbone
    preprocessor_cls = MobileBertPreprocessor

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]
