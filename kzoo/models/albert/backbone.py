"""ALBERT (Lan et al., 2019): BERT with a factorised embedding and weights
shared across layers."""

import keras
from keras import ops

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import TransformerBlock, token_and_position_embeddings
from kzoo.core.arguments import POSITIVE_INT, ArgumentError
from kzoo.core.backbone import Backbone
from kzoo.layers.dropout import Dropout
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


def group_of_layer(layer_index, num_layers, num_groups):
    """The group whose weights layer `layer_index` runs: the original's
    `int(i / (num_hidden_layers / num_hidden_groups))` (a float division,
    so layer counts that do not divide by the group count split as the
    original splits them)."""
    return int(layer_index / (num_layers / num_groups))


@register
class AlbertBackbone(Backbone):
    """The ALBERT encoder.

    Two changes to BERT, both as in the original:

    - Factorised embedding: token, position and token-type embeddings (and
      their LayerNorm) are `embedding_dim` wide (128 in the released
      models), and one dense layer (`embedding_projection`, Hugging Face's
      `embedding_hidden_mapping_in`) maps them to `hidden_dim`.
    - Cross-layer sharing: there are `num_groups` groups of
      `num_inner_repetitions` distinct post-LN blocks each (Hugging Face's
      `num_hidden_groups` and `inner_group_num`). Each of the `num_layers`
      layers runs all the blocks of group `int(i / (num_layers /
      num_groups))` in turn; the released models have one group of one
      block, run 12 or 24 times. A shared block is one layer called several
      times: its weights are one set of variables, not copies.

    The distinct blocks are named `transformer_layer_k`, k = group *
    num_inner_repetitions + inner index (the converter maps them to
    `albert_layer_groups.{group}.albert_layers.{inner}`).

    Inputs (a dict):
        token_ids: `(batch, seq)` int, ids in the SentencePiece vocabulary.
        segment_ids: `(batch, seq)` int, 0 for the first text, 1 for the
            second.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.
        pooled_output: `(batch, hidden_dim)`, tanh(dense([CLS])).

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s.
        intermediate_dim, max_sequence_length, num_segments: as
            `BertBackbone`'s.
        dropout, attention_dropout, activation: as `BertBackbone`'s
            (ALBERT's activation is `"gelu_new"`, the tanh GELU; v2's
            dropouts are 0).
        layer_norm_epsilon, initializer_range: as `BertBackbone`'s.
        embedding_dim: width of the embeddings before the projection.
        num_groups: groups of blocks with their own weights.
        num_inner_repetitions: distinct blocks in each group, run in turn.

    Example:
    ```python
    # albert_base's sizes would be vocabulary_size=30000, num_layers=12,
    # num_heads=12, hidden_dim=768, intermediate_dim=3072,
    # embedding_dim=128; a small random one:
    backbone = kzoo.AlbertBackbone(
        vocabulary_size=300, num_layers=2, num_heads=2, hidden_dim=16,
        intermediate_dim=32, embedding_dim=8)
    outputs = backbone({"token_ids": np.array([[2, 109, 126, 3]]),
                        "segment_ids": np.zeros((1, 4), "int32"),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)
    ```
    """

    input_names = ("token_ids", "segment_ids", "padding_mask")
    family = "albert"
    argument_spec = {**Backbone.argument_spec,
                     "embedding_dim": POSITIVE_INT,
                     "num_groups": POSITIVE_INT,
                     "num_inner_repetitions": POSITIVE_INT,
                     "num_segments": POSITIVE_INT}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, embedding_dim=128, num_groups=1,
                 num_inner_repetitions=1, dropout=0.0, attention_dropout=0.0,
                 max_sequence_length=512, num_segments=2,
                 activation="gelu_new", layer_norm_epsilon=1e-12,
                 initializer_range=0.02, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, embedding_dim, init, dtype)
        segment_embedding = keras.layers.Embedding(
            num_segments, embedding_dim, embeddings_initializer=init,
            dtype=dtype, name="segment_embedding")
        embeddings_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=dtype,
            name="embeddings_layer_norm")
        embeddings_dropout = Dropout(
            dropout, dtype=dtype, name="embeddings_dropout")
        embedding_projection = keras.layers.Dense(
            hidden_dim, kernel_initializer=init, dtype=dtype,
            name="embedding_projection")
        # groups[g]: the distinct blocks of group g, run in order.
        groups = [
            [TransformerBlock(
                num_heads, intermediate_dim, activation=activation,
                dropout=dropout, attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                kernel_initializer=init, dtype=dtype,
                name=f"transformer_layer_{g * num_inner_repetitions + j}")
             for j in range(num_inner_repetitions)]
            for g in range(num_groups)
        ]
        pooler = keras.layers.Dense(
            hidden_dim, activation="tanh", kernel_initializer=init,
            dtype=dtype, name="pooler")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        tokens = token_embedding(token_ids)  # (batch, seq, embedding_dim)
        x = tokens + position_embedding(tokens) + segment_embedding(segment_ids)
        x = embeddings_dropout(embeddings_layer_norm(x))
        x = embedding_projection(x)  # (batch, seq, hidden)
        # (batch, 1, seq): every query may attend to every real token.
        attention_mask = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)
        for i in range(num_layers):
            # The same layer objects again: shared weights, not copies.
            for block in groups[group_of_layer(i, num_layers, num_groups)]:
                x = block(x, attention_mask=attention_mask)
        pooled = pooler(x[:, 0, :])  # (batch, hidden)

        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        groups, layers = values.get("num_groups"), values.get("num_layers")
        if isinstance(groups, int) and isinstance(layers, int) and \
                groups > layers:
            raise ArgumentError(
                f"{cls.__name__}: num_groups ({groups}) must be at most "
                f"num_layers ({layers}); a group no layer runs would hold "
                "weights that are never used or trained.")

    def shared_block(self, group, inner=0):
        """The block `inner` of group `group` (one layer, run by every
        layer of its group)."""
        return self.get_layer(
            f"transformer_layer_{group * self.num_inner_repetitions + inner}")

    @classmethod
    def layout_rules(cls):
        # The distinct blocks are kzoo.layers TransformerBlocks: each
        # shared weight is one variable, so it gets one layout however
        # many layers run it. The embeddings' projection, the position and
        # token-type tables and the pooler stay whole.
        return transformer_rules()
