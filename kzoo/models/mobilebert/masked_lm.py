"""MobileBERT with its masked-LM head."""

from kzoo.core.registry import register
from kzoo.models.mobilebert.backbone import MobileBertBackbone
from kzoo.models.mobilebert.head import MobileBertMaskedLMHead
from kzoo.models.mobilebert.preprocessor import MobileBertMaskedLMPreprocessor
from kzoo.tasks.task_wiring import MaskedLM


@register
class MobileBertMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of MobileBERT, and `fill_mask`
    (Hugging Face's `MobileBertForMaskedLM`).

    The head (`kzoo.models.mobilebert.head.MobileBertMaskedLMHead`) is
    BERT's at the hidden width (dense, the backbone's activation,
    LayerNorm), then logits through the token table widened by rows of
    its own to `hidden_dim`, plus a bias.

    Example:
    ```python
    # Setup: the example of kzoo.MobileBertTokenizer (tokenizer).
    backbone = kzoo.MobileBertBackbone(
        vocabulary_size=30522, num_layers=1, num_heads=2, hidden_dim=32,
        intermediate_dim=24, embedding_dim=8, bottleneck_dim=16)
    mlm = kzoo.MobileBertMaskedLM(
        backbone, preprocessor=kzoo.MobileBertMaskedLMPreprocessor(
            tokenizer, sequence_length=32))
    mlm.fill_mask("The capital of France is [MASK].")  # random weights here
    ```
    """

    backbone_cls = MobileBertBackbone
    preprocessor_cls = MobileBertMaskedLMPreprocessor

    def make_head(self, backbone):
        return MobileBertMaskedLMHead(
            backbone.token_embedding,
            activation=self.head_activation or backbone.activation,
            layer_norm_epsilon=backbone.layer_norm_epsilon,
            kernel_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="mlm_head")
