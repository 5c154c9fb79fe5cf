"""RemBERT for text (and text-pair) classification."""

from kzoo.core.registry import register
from kzoo.models.rembert.backbone import RemBertBackbone
from kzoo.models.rembert.preprocessor import RemBertPreprocessor
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class RemBertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes), as Hugging Face's
    `RemBertForSequenceClassification`.

    The dropout (by default) is RemBERT's `classifier_dropout_prob` (0.1),
    not the backbone's hidden dropout (0); so is a `kzoo.TokenClassifier`'s
    and a `kzoo.MultipleChoice`'s on RemBERT, as transformers' RemBERT
    heads all read it. Fit on raw strings with integer labels; pass
    `(texts_a, texts_b)` for sentence pairs. Arguments: see
    `kzoo.tasks.task_wiring.SequenceClassifier`.

    Example:
    ```python
    # Setup: the example of kzoo.RemBertTokenizer (tokenizer).
    backbone = kzoo.RemBertBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=2,
        num_heads=2, hidden_dim=16, intermediate_dim=32,
        input_embedding_dim=8, output_embedding_dim=24)
    # from_preset("rembert", num_classes=2) starts from the released
    # encoder; then classifier.fit(texts, labels).
    classifier = kzoo.RemBertTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.RemBertPreprocessor(tokenizer, sequence_length=16))
    assert classifier.predict(["a fine film"], verbose=0).shape == (1, 2)
    ```
    """

    backbone_cls = RemBertBackbone
    preprocessor_cls = RemBertPreprocessor
    # RemBertConfig's `classifier_dropout_prob`, which every RemBERT head
    # in transformers reads (sequence, token and multiple choice alike).
    head_dropout = 0.1
    token_head_dropout = 0.1

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]  # tanh(dense([CLS]))
