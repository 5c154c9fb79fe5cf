"""ALBERT with its masked-LM head."""

from kzoo.models.albert.backbone import AlbertBackbone
from kzoo.models.albert.preprocessor import AlbertMaskedLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.task_wiring import MaskedLM


@register
class AlbertMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of ALBERT, and `fill_mask`.

    The head is the original's (Hugging Face's `AlbertMLMHead`): dense
    from the hidden width down to the embedding width, the backbone's
    activation (`gelu_new` in the released models), LayerNorm at the
    embedding width, then logits through the tied token embedding plus a
    bias. Fit on raw strings: the preprocessor masks afresh every call.

    Example:
    ```python
    mlm = kzoo.AlbertMaskedLM.from_preset("albert_base_en_uncased")
    mlm.fill_mask("The capital of France is [MASK].")
    ```
    """

    backbone_cls = AlbertBackbone
    preprocessor_cls = AlbertMaskedLMPreprocessor
