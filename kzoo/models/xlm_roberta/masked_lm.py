"""XLM-R with its masked-LM head."""

from kzoo.models.registry import register
from kzoo.models.roberta.masked_lm import RobertaMaskedLM
from kzoo.models.xlm_roberta.backbone import XLMRobertaBackbone
from kzoo.models.xlm_roberta.preprocessor import \
    XLMRobertaMaskedLMPreprocessor


@register
class XLMRobertaMaskedLM(RobertaMaskedLM):
    """Masked-LM (continued) pretraining of XLM-R, and `fill_mask`: RoBERTa's
    head (dense, GELU, LayerNorm, logits through the tied token embedding
    plus a bias) on XLM-R's encoder.

    Example:
    ```python
    mlm = kzoo.XLMRobertaMaskedLM.from_preset("xlm_roberta_base_multi")
    mlm.fill_mask("Paris est la <mask> de la France.")
    ```
    """

    backbone_cls = XLMRobertaBackbone
    preprocessor_cls = XLMRobertaMaskedLMPreprocessor
