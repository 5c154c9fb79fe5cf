"""DeBERTa-v3 with its masked-LM head."""

from kzoo.models.deberta_v3.backbone import DebertaV3Backbone
from kzoo.models.deberta_v3.preprocessor import DebertaV3MaskedLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import MaskedLM


@register
class DebertaV3MaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of DeBERTa-v3, and `fill_mask`.

    The head is Hugging Face's `DebertaV2ForMaskedLM`'s (its default,
    legacy `cls.predictions`, and the original's `lm_predictions.lm_head`,
    the same layers): dense, the backbone's activation, LayerNorm, then
    logits through the tied token embedding plus a bias.

    Example:
    ```python
    mlm = kzoo.DebertaV3MaskedLM.from_preset("deberta_v3_base_en")
    mlm.fill_mask("The capital of France is [MASK].")
    ```
    """

    backbone_cls = DebertaV3Backbone
    preprocessor_cls = DebertaV3MaskedLMPreprocessor
