"""MobileBERT's masked-LM head: BERT's, with an output embedding wider
than the token table."""

from keras import ops

from kzoo.layers.dense import folded_matmul
from kzoo.layers.heads import MaskedLMHead


class MobileBertMaskedLMHead(MaskedLMHead):
    """`transformers`' `MobileBertLMPredictionHead`: dense (hidden ->
    hidden) + activation + LayerNorm, then logits through an output
    embedding of `hidden_dim` rows: the token table's `embedding_dim`
    rows (tied) stacked on `hidden_dim - embedding_dim` rows of its own
    (`extra_output_embedding`, Hugging Face's `cls.predictions.dense`),
    plus a bias.

    Args: as `kzoo.layers.MaskedLMHead`'s.
    """

    def transform_width(self, hidden_dim):
        return hidden_dim

    def build(self, sequence_output_shape, mask_positions_shape=None):
        super().build(sequence_output_shape, mask_positions_shape)
        extra_rows = sequence_output_shape[-1] - self.token_embedding.output_dim
        self.extra_output_embedding = self.add_weight(
            name="extra_output_embedding",
            shape=(extra_rows, self.token_embedding.input_dim),
            initializer=self.kernel_initializer)

    def output_logits(self, hidden):
        # (hidden, vocab): the tied table's transpose on top, the extra
        # rows below, as the original concatenates them.
        kernel = ops.concatenate(
            [ops.transpose(self.token_embedding.embeddings),
             self.extra_output_embedding], axis=0)
        return folded_matmul(hidden, ops.cast(kernel, hidden.dtype))

