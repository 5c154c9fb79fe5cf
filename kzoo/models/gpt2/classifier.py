"""GPT-2 for text (and text-pair) classification, the GPT recipe."""

from kzoo.layers.pooling import LastTokenPooling
from kzoo.models.gpt2.backbone import GPT2Backbone
from kzoo.models.gpt2.preprocessor import GPT2Preprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class GPT2Classifier(SequenceClassifier):
    """last real token's hidden state -> dense(num_classes), no bias
    (Hugging Face's `GPT2ForSequenceClassification` `score`), with no
    dropout before it by default, as there (`dropout=0.1` gives the GPT
    paper's classifier dropout).

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    pairs, which the preprocessor joins with a delimiter token. Arguments:
    see `kzoo.tasks.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout`, `problem_type`).

    Example:
    ```python
    backbone = kzoo.GPT2Backbone.from_preset(
        "gpt2", load_weights=False, num_layers=1, num_heads=2, hidden_dim=64,
        intermediate_dim=128)
    classifier = kzoo.GPT2Classifier(
        backbone, num_classes=2,
        preprocessor=kzoo.GPT2Preprocessor.from_preset("gpt2",
                                                       sequence_length=16))
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2)
    # kzoo.GPT2Classifier.from_preset("gpt2", num_classes=2) starts from the
    # released weights.
    ```
    """

    backbone_cls = GPT2Backbone
    preprocessor_cls = GPT2Preprocessor
    classifier_use_bias = False
    # GPT2ForSequenceClassification puts no dropout before `score`.
    head_dropout = 0.0

    def pool(self, inputs, backbone_outputs):
        pooling = LastTokenPooling(dtype=self.head_dtype, name="last_token")
        return pooling(backbone_outputs, inputs["padding_mask"])
