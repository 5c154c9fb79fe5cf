"""BART for text (and text-pair) classification, as the original."""

from kzoo.layers.pooling import LastTokenPooling
from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.preprocessor import BartPreprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import SequenceClassifier

EOS_ID = 2  # `</s>`, BART's `eos_token_id`


@register
class BartTextClassifier(SequenceClassifier):
    """BART's sequence classifier (`transformers`'
    `BartForSequenceClassification`, fairseq's classification head): the
    whole encoder-decoder reads the text (the decoder the same ids shifted
    right after `</s>`, see `BartPreprocessor`), and the decoder's state
    at the last `</s>` of each row, the one position that has read all of
    it, goes through the original head: dropout -> dense + tanh
    (`classifier_dense`) -> dropout -> dense(num_classes) (`classifier`,
    the original's `out_proj`).

    The original requires every row to hold the same number of `</s>`
    (`BartPreprocessor` gives one per text: `<s> A </s>`, `<s> A </s></s>
    B </s>`); here each row reads its own last `</s>` (its last real token
    if it has none).

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    text pairs. Arguments: see `kzoo.models.task_wiring.SequenceClassifier`
    (`num_classes`, `problem_type`, `dropout` for both dropouts: by
    default 0.0, the original's `classifier_dropout`/`pooler_dropout`).

    Example:
    ```python
    classifier = kzoo.BartTextClassifier.from_preset(
        "bart_base_en", num_classes=2, sequence_length=128)
    classifier.fit(["great film", "dull film"], [1, 0], epochs=3)
    classifier.predict(["a fine film"])  # (1, 2) logits
    ```
    """

    backbone_cls = BartBackbone
    preprocessor_cls = BartPreprocessor
    hidden_activation = "tanh"

    def default_dropout(self, backbone):
        return 0.0

    def pool(self, inputs, backbone_outputs):
        pooling = LastTokenPooling(token_id=EOS_ID, name="last_eos")
        return pooling(backbone_outputs["decoder_sequence_output"],
                       inputs["encoder_padding_mask"],
                       token_ids=inputs["encoder_token_ids"])
