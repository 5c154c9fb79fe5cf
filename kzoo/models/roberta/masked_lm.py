"""RoBERTa with its masked-LM head."""

from kzoo.models.registry import register
from kzoo.models.roberta.backbone import RobertaBackbone
from kzoo.models.roberta.preprocessor import RobertaMaskedLMPreprocessor
from kzoo.models.task_wiring import MaskedLM


@register
class RobertaMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of RoBERTa, and `fill_mask`.

    The head is the original's: dense, GELU (always the exact GELU,
    whatever the backbone's activation), LayerNorm, then logits through
    the tied token embedding plus a bias. Fit on raw strings: the
    preprocessor masks afresh every epoch (dynamic masking).

    Example:
    ```python
    mlm = kzoo.RobertaMaskedLM.from_preset("roberta_base_en")
    mlm.fill_mask("The capital of France is <mask>.")
    ```
    """

    backbone_cls = RobertaBackbone
    preprocessor_cls = RobertaMaskedLMPreprocessor
    head_activation = "gelu"
