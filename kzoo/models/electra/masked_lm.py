"""ELECTRA's generator: the encoder with its masked-LM head."""

from kzoo.models.electra.backbone import ElectraBackbone
from kzoo.models.electra.preprocessor import ElectraMaskedLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.task_wiring import MaskedLM


@register
class ElectraMaskedLM(MaskedLM):
    """ELECTRA's generator (Hugging Face's `ElectraForMaskedLM`): masked-LM
    training and `fill_mask`.

    The head is the original's `generator_predictions`: dense from
    `hidden_dim` to `embedding_size`, GELU (always the exact GELU),
    LayerNorm, then logits through the tied word embeddings plus a bias
    (`generator_lm_head`).

    Example:
    ```python
    mlm = kzoo.ElectraMaskedLM.from_preset(
        "electra_small_generator_en_uncased", load_weights=False,
        sequence_length=32)
    mlm.fill_mask("The capital of France is [MASK].")  # random weights here
    ```
    """

    backbone_cls = ElectraBackbone
    preprocessor_cls = ElectraMaskedLMPreprocessor
    head_activation = "gelu"
