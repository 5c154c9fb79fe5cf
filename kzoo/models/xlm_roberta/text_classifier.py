"""XLM-R for text (and text-pair) classification."""

from kzoo.core.registry import register
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
    from kzoo import datasets
    # xlm_roberta_base_multi's sentencepiece.bpe.model comes with its
    # weights (downloaded once). Offline: a small one in XLM-R's layout.
    tokenizer = kzoo.XLMRobertaTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    backbone = kzoo.XLMRobertaBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("xlm_roberta_base_multi", num_classes=2) starts from the
    # released encoder; then classifier.fit(texts, labels).
    classifier = kzoo.XLMRobertaTextClassifier(
        backbone, num_classes=2, preprocessor=kzoo.XLMRobertaPreprocessor(
            tokenizer, sequence_length=16))
    assert classifier.predict(["bon film"], verbose=0).shape == (1, 2)
    ```
    """

    backbone_cls = XLMRobertaBackbone
    preprocessor_cls = XLMRobertaPreprocessor
