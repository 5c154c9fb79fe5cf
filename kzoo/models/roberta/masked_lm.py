"""RoBERTa with its masked-LM head."""

from kzoo.core.registry import register
from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.preprocessor import RobertaMaskedLMPreprocessor
from kzoo.tasks.task_wiring import MaskedLM


@register
class RobertaMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of RoBERTa, and `fill_mask`.

    The head is the original's: dense, GELU (always the exact GELU,
    whatever the backbone's activation), LayerNorm, then logits through
    the tied token embedding plus a bias. Fit on raw strings: the
    preprocessor masks afresh every epoch (dynamic masking).

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
    # from_preset("roberta_base_en") is the released model.
    mlm = kzoo.RobertaMaskedLM(
        backbone, preprocessor=kzoo.RobertaMaskedLMPreprocessor(
            tokenizer, sequence_length=16))
    [candidates] = mlm.fill_mask("The capital of France is <mask>.")[0]
    assert len(candidates) == 5   # (token, probability), most likely first
    ```
    """

    backbone_cls = RobertaBackbone
    preprocessor_cls = RobertaMaskedLMPreprocessor
    head_activation = "gelu"
