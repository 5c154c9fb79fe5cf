"""BERT with its masked-LM head."""

from kzoo.models.bert.backbone import BertBackbone
from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import MaskedLM


@register
class BertMaskedLM(MaskedLM):
    """Masked-LM pretraining (or continued pretraining) of BERT.

    The head (dense + activation + LayerNorm) has its output projection
    tied to the token embedding. Fit on raw strings: the preprocessor
    masks 15% of the tokens (80/10/10). `fill_mask` predicts the tokens
    behind "[MASK]" (see `kzoo.tasks.task_wiring.MaskedLM`).

    Example:
    ```python
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                        load_weights=False,
                                        sequence_length=64)
    mlm.fit(["Some text.", "More text."], epochs=1)
    mlm.fill_mask("The [MASK] was shining.")  # top candidates per [MASK]
    ```
    """

    backbone_cls = BertBackbone
    preprocessor_cls = BertMaskedLMPreprocessor
