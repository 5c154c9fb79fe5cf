"""DeBERTa-v3 (He et al., 2021): a post-LayerNorm encoder with
disentangled attention over log-bucketed relative positions and no
absolute position embeddings."""

import keras
from keras import ops

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import TokenEmbedding
from kzoo.layers.disentangled_attention import (
    POSITION_TERMS, DisentangledEncoderBlock, RelativeEmbedding)
from kzoo.layers.dropout import Dropout
from kzoo.layers.encoder_stack import padding_attention_mask
from kzoo.core.arguments import (BOOLEAN, NON_NEGATIVE_INT, POSITIVE_INT,
                                   ArgumentError)
from kzoo.core.backbone import Backbone
from kzoo.layers.initializers import truncated_normal
from kzoo.core.registry import register


@register
class DebertaV3Backbone(Backbone):
    """The DeBERTa-v3 encoder (Hugging Face's `DebertaV2Model` with the v3
    configs).

    As the original: token embeddings only (no absolute positions, no
    token types), LayerNorm, then the padding positions zeroed; post-LN
    blocks whose attention adds content-to-position and
    position-to-content terms (`kzoo.layers.disentangled_attention`) from
    one table of `2 * position_buckets` relative embeddings, LayerNormed
    and shared by every layer. Each query attends to the real tokens only
    (a padding query attends uniformly, as the original's).

    Inputs (a dict):
        token_ids: `(batch, seq)` int.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens.

    Outputs (a dict):
        sequence_output: `(batch, seq, hidden_dim)`, the last layer.
        (DeBERTa has no pooler in its backbone: the classifier has its
        own, `DebertaV3TextClassifier`.)

    Args:
        vocabulary_size, num_layers, num_heads, hidden_dim: as
            `BertBackbone`'s.
        intermediate_dim, dropout, attention_dropout, activation: as
            `BertBackbone`'s.
        layer_norm_epsilon, initializer_range: as `BertBackbone`'s (the
            released models: eps 1e-7).
        max_sequence_length: the longest input (512, the released
            models' `max_position_embeddings`; relative positions need no
            table of that size).
        position_buckets: log buckets of the relative positions (256).
        max_relative_positions: the distance the buckets reach (512).
        share_att_key: project relative embeddings with the content
            query/key projections (True in every v3 model).
        pad_token_id: `[PAD]`'s id (0).

    Example:
    ```python
    # from_preset("deberta_v3_base_en") loads the released weights
    # (downloaded once); offline, the same architecture, small and random:
    backbone = kzoo.DebertaV3Backbone.from_preset(
        "deberta_v3_base_en", load_weights=False, num_layers=1, num_heads=2,
        hidden_dim=16, intermediate_dim=32)
    outputs = backbone({"token_ids": np.array([[1, 31414, 232, 2]]),
                        "padding_mask": np.ones((1, 4), "int32")})
    assert outputs["sequence_output"].shape == (1, 4, 16)
    ```
    """

    input_names = ("token_ids", "padding_mask")
    family = "deberta_v3"
    argument_spec = {**Backbone.argument_spec,
                     "position_buckets": NON_NEGATIVE_INT,
                     "max_relative_positions": POSITIVE_INT,
                     "share_att_key": BOOLEAN,
                     "pad_token_id": NON_NEGATIVE_INT}

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=512, activation="gelu",
                 layer_norm_epsilon=1e-7, initializer_range=0.02,
                 position_buckets=256, max_relative_positions=512,
                 share_att_key=True, pad_token_id=0, dtype=None, **kwargs):
        init = truncated_normal(initializer_range)
        span = position_buckets if position_buckets > 0 \
            else max_relative_positions

        # === Layers ===
        token_embedding = TokenEmbedding(
            vocabulary_size, hidden_dim, embeddings_initializer=init,
            dtype=dtype, name="token_embedding")
        embeddings_layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=dtype,
            name="embeddings_layer_norm")
        relative_embedding = RelativeEmbedding(
            span, hidden_dim, layer_norm=True,
            layer_norm_epsilon=layer_norm_epsilon,
            embeddings_initializer=init, dtype=dtype,
            name="relative_embedding")
        blocks = [DisentangledEncoderBlock(
            num_heads, intermediate_dim, position_buckets=position_buckets,
            max_relative_positions=max_relative_positions,
            pos_att_type=POSITION_TERMS, share_att_key=share_att_key,
            activation=activation, dropout=dropout,
            attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon, kernel_initializer=init,
            dtype=dtype, name=f"transformer_layer_{i}")
            for i in range(num_layers)]

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        x = embeddings_layer_norm(token_embedding(token_ids))
        # The original zeroes the padding positions after the LayerNorm.
        x = x * ops.cast(ops.expand_dims(padding_mask, -1), x.dtype)
        x = Dropout(dropout, dtype=dtype,
                    name="embeddings_dropout")(x)
        # A real query attends to real keys; the original's mask is
        # mask[q] & mask[k], so a padding query has no key at all.
        keys = padding_attention_mask(padding_mask)  # (batch, 1, seq)
        queries = ops.expand_dims(ops.cast(padding_mask, "bool"), -1)
        attention_mask = ops.logical_and(queries, keys)  # (batch, q, k)
        relative = relative_embedding(token_ids)  # (2 * span, hidden)
        for block in blocks:
            x = block(x, relative, attention_mask=attention_mask)

        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs={"sequence_output": x}, dtype=dtype, **kwargs)

    @classmethod
    def check_argument_values(cls, values):
        buckets = values.get("position_buckets")
        if isinstance(buckets, int) and buckets == 1:
            raise ArgumentError(
                f"{cls.__name__}: position_buckets must be 0 (no buckets) "
                "or at least 2; got 1. The released models use 256.")
        pad, size = values.get("pad_token_id"), values.get("vocabulary_size")
        if isinstance(pad, int) and isinstance(size, int) and pad >= size:
            raise ArgumentError(
                f"{cls.__name__}: pad_token_id ({pad}) must be a token id, "
                f"below vocabulary_size ({size}). DeBERTa-v3's is 0 "
                "([PAD]).")

    @classmethod
    def layout_rules(cls):
        return transformer_rules()
