"""BERT for text (and text-pair) classification."""

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class BertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes) logits, as Hugging
    Face's `BertForSequenceClassification`.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence-pair tasks (entailment, paraphrase). Arguments: see
    `kzoo.tasks.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout`, `problem_type` for multi-label or regression heads).

    Example:
    ```python
    # from_preset("bert_base", num_classes=2) starts from the released
    # encoder; offline, a random tiny one:
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, sequence_length=32,
        load_weights=False)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2)
    assert classifier.predict(["a fine film"]).shape == (1, 2)  # logits
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertPreprocessor

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]  # tanh(dense([CLS]))
