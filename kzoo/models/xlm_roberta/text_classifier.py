"""XLM-R for text (and text-pair) classification."""

from kzoo.models.registry import register
from kzoo.models.roberta.text_classifier import RobertaTextClassifier
from kzoo.models.xlm_roberta.backbone import XLMRobertaBackbone
from kzoo.models.xlm_roberta.preprocessor import XLMRobertaPreprocessor


@register
class XLMRobertaTextClassifier(RobertaTextClassifier):
    """RoBERTa's classification head on XLM-R's encoder: `<s>`'s vector ->
    dropout -> dense + tanh -> dropout -> dense(num_classes). Arguments:
    see `kzoo.RobertaTextClassifier`.

    Example:
    ```python
    classifier = kzoo.XLMRobertaTextClassifier.from_preset(
        "xlm_roberta_base_multi", num_classes=2, sequence_length=128)
    classifier.fit(["bon film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = XLMRobertaBackbone
    preprocessor_cls = XLMRobertaPreprocessor
