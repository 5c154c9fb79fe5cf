"""DistilBERT with its masked-LM head."""

from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.preprocessor import \
    DistilBertMaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import MaskedLM


@register
class DistilBertMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of DistilBERT, and `fill_mask`.

    The head is the original's (Hugging Face's `vocab_transform`, the
    activation, `vocab_layer_norm`, `vocab_projector`): dense, the
    backbone's activation, LayerNorm, then logits through the tied token
    embedding plus a bias. Fit on raw strings: masks are drawn afresh every
    epoch. To distil a teacher into it, see `kzoo.Distiller`.

    Example:
    ```python
    # from_preset("distil_bert_base") loads the released weights (downloaded
    # once); offline, a small random model with the real tokenizer:
    backbone = kzoo.DistilBertBackbone.from_preset(
        "distil_bert_base", load_weights=False, num_layers=1, num_heads=2,
        hidden_dim=64, intermediate_dim=128)
    preprocessor = kzoo.DistilBertMaskedLMPreprocessor.from_preset(
        "distil_bert_base", sequence_length=32)
    mlm = kzoo.DistilBertMaskedLM(backbone, preprocessor=preprocessor)
    mlm.fill_mask("The capital of France is [MASK].")
    ```
    """

    backbone_cls = DistilBertBackbone
    preprocessor_cls = DistilBertMaskedLMPreprocessor
