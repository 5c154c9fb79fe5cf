"""ALBERT for text (and text-pair) classification."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.preprocessor import AlbertPreprocessor
from kzoo.core.classification import SINGLE_LABEL
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class AlbertTextClassifier(SequenceClassifier):
    """pooled output -> dropout -> dense(num_classes), as Hugging Face's
    `AlbertForSequenceClassification`.

    The dropout (by default) is the original's `classifier_dropout_prob`
    (0.1), not the backbone's hidden dropout (0 in ALBERT v2); so is a
    `kzoo.TokenClassifier`'s on ALBERT, as `AlbertForTokenClassification`'s.
    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence pairs. Arguments: see
    `kzoo.tasks.task_wiring.SequenceClassifier`.

    Example:
    ```python
    from kzoo import datasets
    # albert_base_en_uncased's spiece.model comes with its weights
    # (downloaded once). Offline: a small one in ALBERT's layout.
    tokenizer = kzoo.AlbertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    backbone = kzoo.AlbertBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=2,
        num_heads=2, hidden_dim=16, intermediate_dim=32, embedding_dim=8)
    # from_preset("albert_base_en_uncased", num_classes=2) starts from the
    # released encoder; then classifier.fit(texts, labels).
    classifier = kzoo.AlbertTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.AlbertPreprocessor(tokenizer, sequence_length=16))
    assert classifier.predict(["a fine film"], verbose=0).shape == (1, 2)
    ```
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertPreprocessor
    # AlbertConfig's `classifier_dropout_prob`, which every ALBERT head in
    # transformers reads (sequence, token and multiple choice alike).
    head_dropout = 0.1
    token_head_dropout = 0.1

    def __init__(self, backbone, num_classes, preprocessor=None, dropout=None,
                 problem_type=SINGLE_LABEL, **kwargs):
        super().__init__(backbone, num_classes, preprocessor=preprocessor,
                         dropout=dropout, problem_type=problem_type, **kwargs)

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["pooled_output"]  # tanh(dense([CLS]))
