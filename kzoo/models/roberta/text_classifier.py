"""RoBERTa for text (and text-pair) classification."""

from kzoo.core.registry import register
from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.preprocessor import RobertaPreprocessor
from kzoo.tasks.task_wiring import SequenceClassifier


@register
class RobertaTextClassifier(SequenceClassifier):
    """The original's classification head (Hugging Face's
    `RobertaClassificationHead`): `<s>`'s vector -> dropout -> dense +
    tanh (`classifier_dense`) -> dropout -> dense(num_classes)
    (`classifier`, the original's `out_proj`). It does not use the
    backbone's pooler.

    Fit on raw strings with integer labels; pass `(texts_a, texts_b)` for
    sentence pairs. Arguments: see
    `kzoo.tasks.task_wiring.SequenceClassifier` (`num_classes`,
    `dropout` for both dropouts, `problem_type`).

    Example:
    ```python
    import json
    from kzoo import presets
    # roberta_base_en's vocab.json comes with its weights (downloaded
    # once). Offline: GPT-2's BPE (kzoo ships it) in RoBERTa's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.RobertaTokenizer("vocab.json", gpt2.file("merges.txt"))
    backbone = kzoo.RobertaBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("roberta_base_en", num_classes=2) starts from the
    # released encoder; then classifier.fit(texts, labels).
    classifier = kzoo.RobertaTextClassifier(
        backbone, num_classes=2,
        preprocessor=kzoo.RobertaPreprocessor(tokenizer, sequence_length=16))
    assert classifier.predict(["a fine film"], verbose=0).shape == (1, 2)
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
