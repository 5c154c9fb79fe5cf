"""RemBERT (Chung et al., 2021, "Rethinking embedding coupling in
pre-trained language models"): BERT's encoder with narrow input
embeddings, decoupled from a wide output embedding."""

import keras

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import token_and_position_embeddings
from kzoo.layers.encoder_stack import post_ln_encoder
from kzoo.core.arguments import POSITIVE_INT
from kzoo.core.backbone import Backbone
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


@register
class RemBertBackbone(Backbone):
    """The RemBERT encoder.

    BERT's post-LayerNorm encoder with the paper's decoupled embeddings:
    the token, position and token-type tables (and their LayerNorm) are
    `input_embedding_dim` wide (256 in the released model), and one dense
    layer (`embeddings_project`, Hugging Face's
    `encoder.embedding_hidden_mapping_in`) maps their sum to `hidden_dim`
    (1152). The output embedding is not the input one: a masked LM's head
    has its own, `output_embedding_dim` wide (1664), which the backbone
    only records (`kzoo.RemBertMaskedLM` builds it). The released
    checkpoint dropped it after pretraining, as the paper did.

    Inputs and outputs are `BertBackbone`'s (`token_ids` in the
    SentencePiece vocabulary).

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s, as are intermediate_dim, max_sequence_length,
            num_segments, dropout, attention_dropout, activation,
            layer_norm_epsilon and initializer_range (RemBERT's dropouts
            are 0, its activation the exact GELU).
        input_embedding_dim: width of the embedding tables.
        output_embedding_dim: width of a masked-LM head's own output
            embedding (its dense layer maps `hidden_dim` to it).

    Example:
    ```python
    # rembert's sizes: vocabulary_size=250300, num_layers=32, num_heads=18,
    # hidden_dim=1152, intermediate_dim=4608, input_embedding_dim=256,
    # output_embedding_dim=1664; a small random one:
    backbone = kzoo.RemBertBackbone(
        vocabulary_size=300, num_layers=2, num_heads=2, hidden_dim=16,
        intermediate_dim=32, input_embedding_dim=8, output_embedding_dim=24)
    outputs = backbone({"token_ids": np.array([[3, 109, 126, 4]]),
                        "segment_ids": np.zeros((1, 4), "int32"),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)
    ```
    """

    input_names = ("token_ids", "segment_ids", "padding_mask")
    family = "rembert"
    argument_spec = {**Backbone.argument_spec,
                     "input_embedding_dim": POSITIVE_INT,
                     "output_embedding_dim": POSITIVE_INT,
                     "num_segments": POSITIVE_INT}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, input_embedding_dim=256,
                 output_embedding_dim=1664, dropout=0.0,
                 attention_dropout=0.0, max_sequence_length=512,
                 num_segments=2, activation="gelu", layer_norm_epsilon=1e-12,
                 initializer_range=0.02, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, input_embedding_dim, init,
            dtype)
        segment_embedding = keras.layers.Embedding(
            num_segments, input_embedding_dim, embeddings_initializer=init,
            dtype=dtype, name="segment_embedding")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        tokens = token_embedding(token_ids)  # (batch, seq, input_embedding)
        x = tokens + position_embedding(tokens) + segment_embedding(segment_ids)
        # LayerNorm at the embeddings' width, then the projection to
        # hidden_dim (always there, even at equal widths, as in the
        # original), BERT's blocks and pooler.
        x, pooled = post_ln_encoder(
            x, padding_mask, num_layers=num_layers, num_heads=num_heads,
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            dropout=dropout, attention_dropout=attention_dropout,
            activation=activation, layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=init, dtype=dtype, project_embeddings=True)

        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    @classmethod
    def layout_rules(cls):
        # Every sharded weight is a kzoo.layers one (the projection, the
        # position and token-type tables and the pooler stay whole).
        return transformer_rules()
