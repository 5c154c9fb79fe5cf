"""BERT for text (and text-pair) classification."""

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import SequenceClassifier


@register
class BertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes) logits, as Hugging
    Face's `BertForSequenceClassification`.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence-pair tasks (entailment, paraphrase). Arguments: see
    `kzoo.models.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout`, `problem_type` for multi-label or regression heads).

    Example:
    ```python
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_base", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPreprocessor

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]  # tanh(dense([CLS]))
