"""MobileBERT (Sun et al., 2020): a thin, deep BERT with bottlenecks,
stacked feed-forward networks and NoNorm, for phones."""

import keras

from kzoo.core.arguments import (BOOLEAN, POSITIVE_INT, ArgumentError,
                                 Divisible)
from kzoo.core.backbone import Backbone
from kzoo.core.registry import register
from kzoo.distribution.layouts import COLUMN, COLUMN_BIAS, EMBEDDING, ROW
from kzoo.layers.dense import FoldedDense
from kzoo.layers.dropout import Dropout
from kzoo.layers.embeddings import PositionEmbedding, TokenEmbedding
from kzoo.layers.encoder_stack import padding_attention_mask
from kzoo.layers.initializers import truncated_normal
from kzoo.models.mobilebert.layers import (MobileBertBlock, NoNorm,
                                           trigram_windows)


@register
class MobileBertBackbone(Backbone):
    """The MobileBERT encoder, as `transformers`' `MobileBertModel`.

    Embeddings: each token's `embedding_dim`-wide vector concatenated
    with its neighbours' (the "trigram input"), projected to `hidden_dim`
    (`embedding_projection`), plus position and token-type embeddings at
    `hidden_dim`, then NoNorm (`x * gamma + beta`) and dropout. Then
    `num_layers` bottleneck blocks (`kzoo.models.mobilebert.layers`):
    attention and `num_feedforward_networks` feed-forward networks at
    `bottleneck_dim`, queries and keys from a shared bottleneck, values
    from the full stream. The pooled output is `[CLS]`'s vector as it is
    (the release: `classifier_activation` false), or through dense + tanh
    with `pooler_dense=True`.

    Inputs (a dict):
        token_ids: `(batch, seq)` int, WordPiece ids (BERT's uncased).
        segment_ids: `(batch, seq)` int, 0 for the first text, 1 for the
            second.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.
        pooled_output: `(batch, hidden_dim)`, see above.

    Args:
        vocabulary_size, num_layers, max_sequence_length: as
            `BertBackbone`'s, as are num_segments and initializer_range.
        num_heads: attention heads over `bottleneck_dim`.
        hidden_dim: the width between blocks (512).
        intermediate_dim: each feed-forward network's inner width (512).
        embedding_dim: the token table's width (128).
        bottleneck_dim: the width inside a block (128; `true_hidden_size`).
        num_feedforward_networks: feed-forward networks per block (4).
        pooler_dense: dense + tanh on `[CLS]` for `pooled_output`.
        dropout: on the embeddings and each block's output bottleneck (0.0
            in the release).
        attention_dropout: on the attention probabilities.
        activation: the feed-forward networks' and the MLM head's (ReLU).
        layer_norm_epsilon: of the MLM head's LayerNorm (the encoder has
            none).

    Example:
    ```python
    backbone = kzoo.MobileBertBackbone(
        vocabulary_size=100, num_layers=2, num_heads=2, hidden_dim=32,
        intermediate_dim=24, embedding_dim=8, bottleneck_dim=16)
    outputs = backbone({"token_ids": np.array([[2, 7, 3]]),
                        "segment_ids": np.zeros((1, 3), "int32"),
                        "padding_mask": np.ones((1, 3), "int32")})
    assert outputs["sequence_output"].shape == (1, 3, 32)
    ```
    """

    input_names = ("token_ids", "segment_ids", "padding_mask")
    family = "mobilebert"
    argument_spec = {**Backbone.argument_spec,
                     "num_segments": POSITIVE_INT,
                     "embedding_dim": POSITIVE_INT,
                     "bottleneck_dim": POSITIVE_INT,
                     "num_feedforward_networks": POSITIVE_INT,
                     "pooler_dense": BOOLEAN}
    # The heads split the bottleneck, not the hidden width.
    argument_rules = (Divisible("bottleneck_dim", "num_heads"),)

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, embedding_dim=128, bottleneck_dim=128,
                 num_feedforward_networks=4, pooler_dense=False, dropout=0.0,
                 attention_dropout=0.1, max_sequence_length=512,
                 num_segments=2, activation="relu", layer_norm_epsilon=1e-12,
                 initializer_range=0.02, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding = TokenEmbedding(
            vocabulary_size, embedding_dim, embeddings_initializer=init,
            dtype=dtype, name="token_embedding")
        embedding_projection = FoldedDense(
            hidden_dim, kernel_initializer=init, dtype=dtype,
            name="embedding_projection")
        position_embedding = PositionEmbedding(
            max_sequence_length, hidden_dim, initializer=init, dtype=dtype,
            name="position_embedding")
        segment_embedding = keras.layers.Embedding(
            num_segments, hidden_dim, embeddings_initializer=init,
            dtype=dtype, name="segment_embedding")
        blocks = [MobileBertBlock(
            num_heads, bottleneck_dim, intermediate_dim,
            num_feedforward_networks, activation=activation, dropout=dropout,
            attention_dropout=attention_dropout, kernel_initializer=init,
            dtype=dtype, name=f"mobilebert_layer_{i}")
            for i in range(num_layers)]

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        x = embedding_projection(trigram_windows(token_embedding(token_ids)))
        x = x + position_embedding(x) + segment_embedding(segment_ids)
        x = NoNorm(dtype=dtype, name="embeddings_norm")(x)
        x = Dropout(dropout, dtype=dtype,
                    name="embeddings_dropout")(x)
        attention_mask = padding_attention_mask(padding_mask)
        for block in blocks:
            x = block(x, attention_mask=attention_mask)
        pooled = x[:, 0, :]  # (batch, hidden): [CLS]
        if pooler_dense:
            pooled = keras.layers.Dense(
                hidden_dim, activation="tanh", kernel_initializer=init,
                dtype=dtype, name="pooler")(pooled)

        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        embedding_dim, hidden_dim = values.get("embedding_dim"), \
            values.get("hidden_dim")
        if isinstance(embedding_dim, int) and isinstance(hidden_dim, int) \
                and embedding_dim >= hidden_dim:
            raise ArgumentError(
                f"MobileBertBackbone: embedding_dim ({embedding_dim}) must "
                f"be smaller than hidden_dim ({hidden_dim}): the masked-LM "
                "head's output embedding is the token table plus "
                "hidden_dim - embedding_dim rows of its own. Use "
                f"embedding_dim < {hidden_dim}.")

    @classmethod
    def layout_rules(cls):
        # Megatron's split of the attention and of every feed-forward
        # network inside the blocks; the bottleneck projections and the
        # NoNorms stay whole.
        block = r"(.*/)?mobilebert_layer_\d+"
        network = block + r"/feed_forward_\d+"
        return {
            r"(.*/)?token_embedding/embeddings": EMBEDDING,
            block + r"/attention/(query|key|value)/kernel": COLUMN,
            block + r"/attention/(query|key|value)/bias": COLUMN_BIAS,
            block + r"/attention/output/kernel": ROW,
            network + r"/intermediate_dense/kernel": COLUMN,
            network + r"/intermediate_dense/bias": COLUMN_BIAS,
            network + r"/output_dense/kernel": ROW,
        }
