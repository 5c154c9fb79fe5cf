"""RoBERTa (Liu et al., 2019): BERT's encoder, trained without NSP, with
fairseq's position numbering and a single token type."""

import keras
from keras import ops

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import TokenEmbedding
from kzoo.layers.encoder_stack import post_ln_encoder
from kzoo.core.arguments import NON_NEGATIVE_INT, ArgumentError
from kzoo.core.backbone import Backbone
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


def roberta_position_ids(token_ids, pad_token_id):
    """fairseq's `make_positions` (transformers'
    `create_position_ids_from_input_ids`): the n-th token that is not
    `<pad>` gets position `pad_token_id + n` (n from 1), every `<pad>` gets
    `pad_token_id`. Positions count real tokens, not places, so left
    padding shifts nothing."""
    not_pad = ops.cast(ops.not_equal(token_ids, pad_token_id), "int32")
    return ops.cumsum(not_pad, axis=1) * not_pad + pad_token_id


@register
class RobertaBackbone(Backbone):
    """The RoBERTa encoder (post-LayerNorm transformer, as BERT's).

    Differences from `BertBackbone`, all as in the original: position ids
    come from the token ids (see `roberta_position_ids`), so the position
    table has `max_sequence_length + pad_token_id + 1` rows (514 for the
    released models: 512 positions after the padding index); there is one
    token type, whose embedding is added to every token, and no segment
    input.

    Inputs (a dict):
        token_ids: `(batch, seq)` int, ids in RoBERTa's vocabulary.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.
        pooled_output: `(batch, hidden_dim)`, tanh(dense(`<s>`)), Hugging
            Face's `RobertaModel` pooler (RoBERTa's own tasks do not use
            it: its classifier has its own dense layer on `<s>`).

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s.
        intermediate_dim, dropout, attention_dropout, activation: as
            `BertBackbone`'s.
        layer_norm_epsilon, initializer_range: as `BertBackbone`'s (the
            released models: eps 1e-5).
        max_sequence_length: the longest input (512 for the released
            models).
        pad_token_id: fairseq's padding index (1): `<pad>` tokens get this
            position, real tokens the ones after it.

    Example:
    ```python
    # from_preset("roberta_base_en") loads the released weights
    # (downloaded once); offline, the same architecture, small and random:
    backbone = kzoo.RobertaBackbone.from_preset(
        "roberta_base_en", load_weights=False, num_layers=1, num_heads=2,
        hidden_dim=16, intermediate_dim=32)
    outputs = backbone({"token_ids": np.array([[0, 31414, 232, 2]]),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)
    ```
    """

    input_names = ("token_ids", "padding_mask")
    family = "roberta"
    argument_spec = {**Backbone.argument_spec,
                     "pad_token_id": NON_NEGATIVE_INT}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=512, activation="gelu",
                 layer_norm_epsilon=1e-5, initializer_range=0.02,
                 pad_token_id=1, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding = TokenEmbedding(
            vocabulary_size, hidden_dim, embeddings_initializer=init,
            dtype=dtype, name="token_embedding")
        position_embedding = keras.layers.Embedding(
            max_sequence_length + pad_token_id + 1, hidden_dim,
            embeddings_initializer=init, dtype=dtype,
            name="position_embedding")
        # The one token type: a table of one row, added to every token.
        segment_embedding = keras.layers.Embedding(
            1, hidden_dim, embeddings_initializer=init, dtype=dtype,
            name="segment_embedding")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        positions = roberta_position_ids(token_ids, pad_token_id)
        x = (token_embedding(token_ids)  # (batch, seq, hidden)
             + position_embedding(positions)
             + segment_embedding(ops.zeros_like(token_ids)))
        x, pooled = post_ln_encoder(
            x, padding_mask, num_layers=num_layers, num_heads=num_heads,
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            dropout=dropout, attention_dropout=attention_dropout,
            activation=activation, layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=init, dtype=dtype)

        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        pad, size = values.get("pad_token_id"), values.get("vocabulary_size")
        if isinstance(pad, int) and isinstance(size, int) and pad >= size:
            raise ArgumentError(
                f"{cls.__name__}: pad_token_id ({pad}) must be a token id, "
                f"below vocabulary_size ({size}). RoBERTa's is 1 (<pad>).")

    @classmethod
    def layout_rules(cls):
        # Every sharded weight is a kzoo.layers one; the position and
        # token-type tables and the pooler stay whole.
        return transformer_rules()
