"""BERT (Devlin et al., 2018): a post-LayerNorm transformer encoder."""

import keras

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import token_and_position_embeddings
from kzoo.layers.initializers import truncated_normal
from kzoo.layers.encoder_stack import post_ln_encoder
from kzoo.core.arguments import POSITIVE_INT
from kzoo.core.backbone import Backbone
from kzoo.core.registry import register


@register
class BertBackbone(Backbone):
    """The BERT encoder.

    Inputs (a dict):
        token_ids: `(batch, seq)` int, ids in the WordPiece vocabulary.
        segment_ids: `(batch, seq)` int, 0 for the first text, 1 for the
            second (up to `num_segments - 1`).
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.
        pooled_output: `(batch, hidden_dim)`, tanh(dense(first token)).

    Args:
        vocabulary_size: number of token ids.
        num_layers, num_heads, hidden_dim, intermediate_dim: the shape.
        dropout: hidden dropout (embeddings, attention output, FFN output).
        attention_dropout: dropout on attention probabilities.
        max_sequence_length: size of the learned position table.
        num_segments: size of the segment (token type) table.
        activation: FFN activation, Hugging Face naming (`"gelu"` = erf).
        layer_norm_epsilon: 1e-12 in the original.
        initializer_range: stddev of the truncated-normal initialiser.

    Example:
    ```python
    # from_preset("bert_base") loads the released weights (downloaded once);
    # load_weights=False builds the same architecture with random weights.
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    outputs = backbone({
        "token_ids": np.array([[101, 7592, 102]]),
        "segment_ids": np.zeros((1, 3), "int32"),
        "padding_mask": np.ones((1, 3), "int32"),
    })
    assert outputs["sequence_output"].shape == (1, 3, 128)
    assert outputs["pooled_output"].shape == (1, 128)
    ```
    """

    input_names = ("token_ids", "segment_ids", "padding_mask")
    family = "bert"
    argument_spec = {**Backbone.argument_spec, "num_segments": POSITIVE_INT}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=512, num_segments=2, activation="gelu",
                 layer_norm_epsilon=1e-12, initializer_range=0.02,
                 dtype=None, **kwargs):
        init = truncated_normal(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, hidden_dim, init, dtype)
        segment_embedding = keras.layers.Embedding(
            num_segments, hidden_dim, embeddings_initializer=init,
            dtype=dtype, name="segment_embedding")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        segment_ids = keras.Input((None,), dtype="int32", name="segment_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        tokens = token_embedding(token_ids)  # (batch, seq, hidden)
        x = tokens + position_embedding(tokens) + segment_embedding(segment_ids)
        x, pooled = post_ln_encoder(
            x, padding_mask, num_layers=num_layers, num_heads=num_heads,
            hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
            dropout=dropout, attention_dropout=attention_dropout,
            activation=activation, layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=init, dtype=dtype)

        super().__init__(
            inputs={"token_ids": token_ids, "segment_ids": segment_ids,
                    "padding_mask": padding_mask},
            outputs={"sequence_output": x, "pooled_output": pooled},
            dtype=dtype, **kwargs)

    @classmethod
    def layout_rules(cls):
        # Every sharded weight is a kzoo.layers one; the pooler stays whole.
        return transformer_rules()
