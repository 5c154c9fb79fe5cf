"""RemBERT with its masked-LM head, whose output embedding is its own."""

from kzoo.core.registry import register
from kzoo.layers import TokenEmbedding
from kzoo.models.rembert.backbone import RemBertBackbone
from kzoo.models.rembert.preprocessor import RemBertMaskedLMPreprocessor
from kzoo.tasks.task_wiring import MaskedLM, masked_lm_head


@register
class RemBertMaskedLM(MaskedLM):
    """Masked-LM (continued) pretraining of RemBERT, and `fill_mask`.

    The head is Hugging Face's `RemBertLMPredictionHead`: dense from the
    hidden width to `output_embedding_dim` (1664), the backbone's
    activation, LayerNorm at that width, then logits through the head's
    own output embedding (`output_embedding`, `(vocabulary,
    output_embedding_dim)`) plus a bias: kzoo's BERT head
    (`kzoo.layers.MaskedLMHead`) with a decoupled table in place of the
    tied token embedding. The released `rembert` checkpoint holds no
    trained head (the paper dropped the output embedding after
    pretraining): `from_preset("rembert")` starts it random, and says so.

    Example:
    ```python
    # Setup: the example of kzoo.RemBertTokenizer (tokenizer).
    backbone = kzoo.RemBertBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=2,
        num_heads=2, hidden_dim=16, intermediate_dim=32,
        input_embedding_dim=8, output_embedding_dim=24)
    mlm = kzoo.RemBertMaskedLM(
        backbone, preprocessor=kzoo.RemBertMaskedLMPreprocessor(
            tokenizer, sequence_length=16))
    [candidates] = mlm.fill_mask("The capital of France is [MASK].")[0]
    assert len(candidates) == 5   # (token, probability), most likely first
    ```
    """

    backbone_cls = RemBertBackbone
    preprocessor_cls = RemBertMaskedLMPreprocessor

    def make_head(self, backbone):
        # Made here, not in the backbone: only the masked LM has it.
        output_embedding = TokenEmbedding(
            backbone.vocabulary_size, backbone.output_embedding_dim,
            embeddings_initializer=backbone.kernel_initializer(),
            dtype=backbone.dtype_policy, name="output_embedding")
        output_embedding.build()
        return masked_lm_head(backbone, output_embedding=output_embedding)
