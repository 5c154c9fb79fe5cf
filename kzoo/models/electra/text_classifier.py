"""ELECTRA for text (and text-pair) classification."""

from kzoo.models.electra.backbone import ElectraBackbone
from kzoo.models.electra.preprocessor import ElectraPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class ElectraTextClassifier(SequenceClassifier):
    """The original's classification head (Hugging Face's
    `ElectraClassificationHead`): `[CLS]`'s vector -> dropout -> dense +
    GELU (`classifier_dense`) -> dropout -> dense(num_classes)
    (`classifier`, the original's `out_proj`).

    Fit on raw strings with integer labels; `(texts_a, texts_b)` for
    pairs. Arguments: see `kzoo.tasks.task_wiring.SequenceClassifier`
    (`num_classes`, `dropout`, `problem_type`).

    Example:
    ```python
    classifier = kzoo.ElectraTextClassifier.from_preset(
        "electra_small_discriminator_en_uncased", num_classes=2,
        sequence_length=32, load_weights=False)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2)
    ```
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraPreprocessor
    hidden_activation = "gelu"  # the original's (BERT-style heads: tanh)

    def pool(self, inputs, backbone_outputs):
        return backbone_outputs["sequence_output"][:, 0, :]  # [CLS]
