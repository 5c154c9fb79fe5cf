"""BART for text (and text-pair) classification, as the original."""

from kzoo.layers.pooling import LastTokenPooling
from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.preprocessor import BartPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import SequenceClassifier

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
    text pairs. Arguments: see `kzoo.tasks.task_wiring.SequenceClassifier`
    (`num_classes`, `problem_type`, `dropout` for both dropouts: by
    default 0.0, the original's `classifier_dropout`/`pooler_dropout`).

    Example:
    ```python
    import json
    from kzoo import presets
    # bart_base_en's vocab.json comes with its weights (downloaded once).
    # Offline: GPT-2's BPE (kzoo ships it) in BART's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.BartTokenizer("vocab.json", gpt2.file("merges.txt"))
    backbone = kzoo.BartBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=64)
    # from_preset("bart_base_en", num_classes=2) starts from the released
    # model; then classifier.fit(texts, labels).
    classifier = kzoo.BartTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.BartPreprocessor(tokenizer, sequence_length=16))
    logits = classifier.predict(["a fine film"], verbose=0)
    assert logits.shape == (1, 2)
    ```
    """

    backbone_cls = BartBackbone
    preprocessor_cls = BartPreprocessor
    hidden_activation = "tanh"

    def default_dropout(self, backbone):
        return 0.0

    def pool(self, inputs, backbone_outputs):
        pooling = LastTokenPooling(token_id=EOS_ID, dtype=self.head_dtype,
                                   name="last_eos")
        return pooling(backbone_outputs["decoder_sequence_output"],
                       inputs["encoder_padding_mask"],
                       token_ids=inputs["encoder_token_ids"])
