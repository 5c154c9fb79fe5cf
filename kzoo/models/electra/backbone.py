"""ELECTRA (Clark et al., 2020): BERT's encoder with factorised embeddings,
pretrained as a discriminator of replaced tokens."""

import keras

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import token_and_position_embeddings
from kzoo.layers.encoder_stack import post_ln_encoder
from kzoo.core.arguments import POSITIVE_INT, Optional
from kzoo.core.backbone import Backbone
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


def electra_embeddings(tables, token_ids, segment_ids):
    """Token + position + token-type embeddings, `(batch, seq,
    embedding_size)`, from `tables`: the `(token, position, segment)`
    embedding layers. The backbone sums its own, and `ElectraPretrainer`'s
    generator sums the same layers (ELECTRA shares the tables between
    generator and discriminator)."""
    token_embedding, position_embedding, segment_embedding = tables
    tokens = token_embedding(token_ids)  # (batch, seq, width)
    return (tokens + position_embedding(tokens)
            + segment_embedding(segment_ids))


def embedding_tables(backbone):
    """A backbone's `(token, position, segment)` embedding layers."""
    return tuple(backbone.get_layer(name) for name in (
        "token_embedding", "position_embedding", "segment_embedding"))


@register
class ElectraBackbone(Backbone):
    """The ELECTRA encoder (the discriminator's or the generator's).

    BERT's embeddings (word, position, token type, LayerNorm) at
    `embedding_size`, projected to `hidden_dim` by a dense layer
    (`embeddings_project`) when the two differ, then BERT's post-LayerNorm
    blocks. As the original `ElectraModel`, there is no pooler: tasks read
    `sequence_output` (the classifier its `[CLS]` vector).

    Inputs (a dict):
        token_ids: `(batch, seq)` int, WordPiece ids.
        segment_ids: `(batch, seq)` int, 0 for the first text, 1 for the
            second.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s.
        intermediate_dim, dropout, attention_dropout, max_sequence_length:
            as `BertBackbone`'s.
        num_segments, activation, layer_norm_epsilon, initializer_range:
            as `BertBackbone`'s.
        embedding_size: width of the embedding tables (128 for the small
            models); None: `hidden_dim` (no projection).

    Example:
    ```python
    backbone = kzoo.ElectraBackbone.from_preset(
        "electra_small_discriminator_en_uncased", load_weights=False)
    outputs = backbone({"token_ids": np.array([[101, 7592, 102]]),
                        "segment_ids": np.zeros((1, 3), "int32"),
                        "padding_mask": np.ones((1, 3), "int32")})
    outputs["sequence_output"].shape  # (1, 3, 256)
    ```
    """

    input_names = ("token_ids", "segment_ids", "padding_mask")
    family = "electra"
    argument_spec = {**Backbone.argument_spec, "num_segments": POSITIVE_INT,
                     "embedding_size": Optional(POSITIVE_INT)}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, embedding_size=None, dropout=0.1,
                 attention_dropout=0.1, max_sequence_length=512,
                 num_segments=2, activation="gelu", layer_norm_epsilon=1e-12,
                 initializer_range=0.02, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)
        width = embedding_size or hidden_dim

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, width, init, dtype)
        segment_embedding = keras.layers.Embedding(
            num_segments, width, embeddings_initializer=init, dtype=dtype,
            name="segment_embedding")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        x = electra_embeddings(
            (token_embedding, position_embedding, segment_embedding),
            token_ids, segment_ids)
        x, _ = post_ln_encoder(
            x, padding_mask, num_layers=num_layers, num_heads=num_heads,
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            dropout=dropout, attention_dropout=attention_dropout,
            activation=activation, layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=init, dtype=dtype, pooler=False,
            project_embeddings=width != hidden_dim)

        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": x}, dtype=dtype, **kwargs)

    @property
    def embedding_width(self):
        """The embedding tables' width (`embedding_size` or `hidden_dim`)."""
        return self.embedding_size or self.hidden_dim

    @classmethod
    def layout_rules(cls):
        # Every sharded weight is a kzoo.layers one (the projection and
        # the token-type table stay whole).
        return transformer_rules()
