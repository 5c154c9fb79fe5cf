"""DistilBERT with its masked-LM head."""

from kzoo.models.distil_bert.backbone import DistilBertBackbone
from kzoo.models.distil_bert.preprocessor import \
    DistilBertMaskedLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import MaskedLM


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
    mlm = kzoo.DistilBertMaskedLM.from_preset("distil_bert_base")
    mlm.fill_mask("The capital of France is [MASK].")
    ```
    """

    backbone_cls = DistilBertBackbone
    preprocessor_cls = DistilBertMaskedLMPreprocessor
