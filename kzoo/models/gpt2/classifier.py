"""GPT-2 for text (and text-pair) classification, the GPT recipe."""

import keras
from keras import ops

from kzoo.models.gpt2.backbone import GPT2Backbone
from kzoo.models.gpt2.preprocessor import GPT2Preprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import SequenceClassifier


class LastTokenPooling(keras.layers.Layer):
    """`(batch, seq, hidden)`, `padding_mask (batch, seq)` -> the hidden
    state of each row's last real token, `(batch, hidden)`.

    Padding must be on the right (as kzoo's preprocessors pad). A causal
    decoder's last token is the only one that has read the whole text,
    which is why GPT classifies from it rather than from the first.
    """

    def call(self, hidden_states, padding_mask):
        lengths = ops.sum(ops.cast(padding_mask, "int32"), axis=1)
        last = ops.maximum(lengths - 1, 0)  # (batch,)
        index = ops.reshape(last, (-1, 1, 1))
        return ops.squeeze(
            ops.take_along_axis(hidden_states, index, axis=1), 1)

    def compute_output_shape(self, hidden_states_shape, padding_mask_shape):
        return (hidden_states_shape[0], hidden_states_shape[-1])


@register
class GPT2Classifier(SequenceClassifier):
    """last real token's hidden state -> dropout -> dense(num_classes), no
    bias (Hugging Face's `GPT2ForSequenceClassification` `score`).

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    pairs, which the preprocessor joins with a delimiter token. Arguments:
    see `kzoo.models.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout`, `problem_type`).

    Example:
    ```python
    classifier = kzoo.GPT2Classifier.from_preset(
        "gpt2", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    ```
    """

    backbone_cls = GPT2Backbone
    preprocessor_cls = GPT2Preprocessor
    classifier_use_bias = False

    def pool(self, inputs, backbone_outputs):
        pooling = LastTokenPooling(name="last_token")
        return pooling(backbone_outputs, inputs["padding_mask"])
