"""RoBERTa for text (and text-pair) classification."""

from kzoo.models.registry import register
from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.preprocessor import RobertaPreprocessor
from kzoo.models.task_wiring import SequenceClassifier


@register
class RobertaTextClassifier(SequenceClassifier):
    """The original's classification head (Hugging Face's
    `RobertaClassificationHead`): `<s>`'s vector -> dropout -> dense +
    tanh (`classifier_dense`) -> dropout -> dense(num_classes)
    (`classifier`, the original's `out_proj`). It does not use the
    backbone's pooler.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence pairs. Arguments: see
    `kzoo.models.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout` for both dropouts, `problem_type`).

    Example:
    ```python
    classifier = kzoo.RobertaTextClassifier.from_preset(
        "roberta_base_en", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = RobertaBackbone
    preprocessor_cls = RobertaPreprocessor
    hidden_activation = "tanh"

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["sequence_output"][:, 0, :]  # <s>


class RobertaPoolerScorer(SequenceClassifier):
    """The backbone's pooler (tanh(dense(`<s>`))) -> dropout -> dense:
    the head `transformers`' `RobertaForMultipleChoice` (and XLM-R's) puts
    on each (context, choice) pair, unlike RoBERTa's classification head.
    Used by `kzoo.MultipleChoice`, not on its own (not registered: it is
    rebuilt from the backbone, never saved by name)."""

    backbone_cls = RobertaBackbone
    preprocessor_cls = RobertaPreprocessor

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]


RobertaTextClassifier.multiple_choice_cls = RobertaPoolerScorer
