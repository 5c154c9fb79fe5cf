"""DistilBERT (Sanh et al., 2019): BERT's encoder with half the layers,
no token types and no pooler, distilled from BERT."""

import keras
from keras import ops

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import (SinusoidalPositions, TransformerBlock,
                         token_and_position_embeddings)
from kzoo.core.arguments import BOOLEAN
from kzoo.core.backbone import Backbone
from kzoo.layers.dropout import Dropout
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


@register
class DistilBertBackbone(Backbone):
    """The DistilBERT encoder (post-LayerNorm transformer, as BERT's).

    Differences from `BertBackbone`, all as in the original: no token-type
    (segment) embedding and no segment input, and no pooler (DistilBERT's
    tasks read the `[CLS]` vector of the last layer themselves).

    Inputs (a dict):
        token_ids: `(batch, seq)` int, ids in the WordPiece vocabulary.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s (Hugging Face's `vocab_size`, `n_layers`,
            `n_heads`, `dim`).
        intermediate_dim, dropout, attention_dropout, max_sequence_length:
            as `BertBackbone`'s (Hugging Face's `hidden_dim`, ...).
        activation, initializer_range: as `BertBackbone`'s.
        layer_norm_epsilon: 1e-12, fixed in the original (Hugging Face's
            DistilBERT has no setting for it, so a checkpoint exports only
            with 1e-12).
        sinusoidal_position_embeddings: the position table is the fixed
            sinusoidal one (`kzoo.layers.sinusoidal_position_table`) and is
            not trained (Hugging Face's `sinusoidal_pos_embds`); the
            released models learn theirs (False).

    Example:
    ```python
    backbone = kzoo.DistilBertBackbone.from_preset(
        "distil_bert_base_en_uncased", load_weights=False, num_layers=1)
    outputs = backbone({"token_ids": np.array([[101, 7592, 102]]),
                        "padding_mask": np.ones((1, 3), "int32")})
    assert outputs["sequence_output"].shape == (1, 3, 768)
    ```
    """

    input_names = ("token_ids", "padding_mask")
    family = "distil_bert"
    argument_spec = {**Backbone.argument_spec,
                     "sinusoidal_position_embeddings": BOOLEAN}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=512, activation="gelu",
                 layer_norm_epsilon=1e-12, initializer_range=0.02,
                 sinusoidal_position_embeddings=False, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, hidden_dim, init, dtype)
        if sinusoidal_position_embeddings:
            position_embedding.initializer = SinusoidalPositions()
            position_embedding.trainable = False  # fixed, as the original
        embeddings_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=dtype,
            name="embeddings_layer_norm")
        embeddings_dropout = Dropout(
            dropout, dtype=dtype, name="embeddings_dropout")
        blocks = [
            TransformerBlock(
                num_heads, intermediate_dim, activation=activation,
                dropout=dropout, attention_dropout=attention_dropout,
                layer_norm_epsilon=layer_norm_epsilon,
                kernel_initializer=init, dtype=dtype,
                name=f"transformer_layer_{i}")
            for i in range(num_layers)
        ]

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        tokens = token_embedding(token_ids)  # (batch, seq, hidden)
        x = tokens + position_embedding(tokens)
        x = embeddings_dropout(embeddings_layer_norm(x))
        # (batch, 1, seq): every query may attend to every real token.
        attention_mask = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)
        for block in blocks:
            x = block(x, attention_mask=attention_mask)

        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x}, dtype=dtype, **kwargs)

    @classmethod
    def layout_rules(cls):
        # Every sharded weight is a kzoo.layers one; the position table
        # stays whole.
        return transformer_rules()
