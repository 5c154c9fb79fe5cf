"""DeBERTa-v3 with its masked-LM head."""

from kzoo.models.deberta_v3.backbone import DebertaV3Backbone
from kzoo.models.deberta_v3.preprocessor import DebertaV3MaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import MaskedLM


@register
class DebertaV3MaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of DeBERTa-v3, and `fill_mask`.

    The head is Hugging Face's `DebertaV2ForMaskedLM`'s (its default,
    legacy `cls.predictions`, and the original's `lm_predictions.lm_head`,
    the same layers): dense, the backbone's activation, LayerNorm, then
    logits through the tied token embedding plus a bias.

    Example:
    ```python
    from kzoo import datasets
    # deberta_v3_base_en's spm.model comes with its weights (downloaded
    # once). Offline: a small one in DeBERTa-v3's layout.
    tokenizer = kzoo.DebertaV3Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    backbone = kzoo.DebertaV3Backbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32)
    # from_preset("deberta_v3_base_en") is the released model.
    mlm = kzoo.DebertaV3MaskedLM(
        backbone, preprocessor=kzoo.DebertaV3MaskedLMPreprocessor(
            tokenizer, sequence_length=16))
    [candidates] = mlm.fill_mask("The capital of France is [MASK].")[0]
    assert len(candidates) == 5   # (token, probability), most likely first
    ```
    """

    backbone_cls = DebertaV3Backbone
    preprocessor_cls = DebertaV3MaskedLMPreprocessor
