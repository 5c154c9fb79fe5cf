"""T5 (Raffel et al., 2020): a pre-LN encoder-decoder with RMSNorm and
relative position biases; v1.0 and v1.1 / Flan-T5 by config."""

import keras

from kzoo.layers import (CausalPaddingMask, RelativePositionBias, RMSNorm,
                         TokenEmbedding, TransformerBlock,
                         TransformerDecoderBlock)
from kzoo.layers.dropout import Dropout
from kzoo.layers.encoder_stack import padding_attention_mask
from kzoo.core.arguments import (ACTIVATION, BOOLEAN, FRACTION,
                                   POSITIVE_FLOAT, POSITIVE_INT, Optional)
from kzoo.core.encoder_decoder import EncoderDecoderBackbone
from kzoo.core.registry import register


def t5_kernel_initializer(factor=1.0):
    # T5 draws kernels from N(0, factor / fan_in) (Mesh TensorFlow's
    # variance scaling); the query's extra 1/sqrt(head_dim) is folded in by
    # `T5Backbone._fold_query_scale`.
    return keras.initializers.VarianceScaling(
        scale=factor, mode="fan_in", distribution="untruncated_normal")


@register
class T5Backbone(EncoderDecoderBackbone):
    """The T5 encoder-decoder.

    Encoder: shared token embedding -> dropout -> `num_layers` pre-LN
    blocks (RMSNorm, no biases, no logit scaling, a bidirectional relative
    position bias computed once and added in every layer) -> RMSNorm ->
    dropout. Decoder: the same embedding -> `num_decoder_layers` blocks with
    causal self-attention (causal position buckets) and cross-attention
    over the encoder output -> RMSNorm -> dropout. The LM head is the
    task's (`T5Seq2SeqLM`).

    v1.0 (`t5-small`...): `activation="relu"`, `gated_feed_forward=False`,
    `tie_word_embeddings=True`. v1.1 and Flan-T5: `activation="gelu_new"`,
    `gated_feed_forward=True` (Hugging Face's `gated-gelu`),
    `tie_word_embeddings=False`.

    Inputs (a dict):
        encoder_token_ids, encoder_padding_mask: `(batch, src)`.
        decoder_token_ids, decoder_padding_mask: `(batch, tgt)`, the target
            shifted right (the decoder starts from the pad id, 0).
        Padding goes on the right.

    Outputs (a dict): `encoder_sequence_output (batch, src, hidden_dim)`
    and `decoder_sequence_output (batch, tgt, hidden_dim)`.

    Args:
        vocabulary_size: rows of the shared embedding (32,128 for T5).
        num_layers: encoder blocks; `num_decoder_layers`: decoder blocks
            (None: as many as the encoder).
        num_heads, hidden_dim, intermediate_dim: the shape (Hugging Face's
            `num_heads`, `d_model`, `d_ff`).
        key_value_dim: each head's width (`d_kv`; need not divide
            `hidden_dim`).
        dropout: T5's `dropout_rate`, everywhere (embeddings, sublayer
            outputs, FFN activations, attention probabilities).
        activation: FFN activation (`"relu"` or `"gelu_new"`).
        gated_feed_forward: GEGLU FFN (`wi_0`, `wi_1`) of v1.1.
        tie_word_embeddings: v1.0's LM head is the embedding (with the
            `hidden_dim ** -0.5` rescale); v1.1 has its own.
        relative_attention_num_buckets, relative_attention_max_distance:
            the position buckets (32, 128).
        layer_norm_epsilon: of every RMSNorm (1e-6).
        initializer_factor: T5's `initializer_factor` (1.0).

    Example:
    ```python
    # from_preset("t5_small_multi") loads the released weights
    # (downloaded once); offline, a small random T5:
    backbone = kzoo.T5Backbone(vocabulary_size=100, num_layers=1,
                               num_heads=2, hidden_dim=16, intermediate_dim=32)
    out = backbone({
        "encoder_token_ids": np.array([[13, 15, 12, 29, 10, 1]]),
        "encoder_padding_mask": np.ones((1, 6), "int32"),
        "decoder_token_ids": np.array([[0, 64]]),
        "decoder_padding_mask": np.ones((1, 2), "int32")})
    assert out["decoder_sequence_output"].shape == (1, 2, 16)
    ```
    """

    family = "t5"
    argument_spec = {
        "vocabulary_size": POSITIVE_INT,
        "num_layers": POSITIVE_INT,
        "num_heads": POSITIVE_INT,
        "hidden_dim": POSITIVE_INT,
        "intermediate_dim": POSITIVE_INT,
        "key_value_dim": Optional(POSITIVE_INT),
        "num_decoder_layers": Optional(POSITIVE_INT),
        "dropout": FRACTION,
        "activation": ACTIVATION,
        "gated_feed_forward": BOOLEAN,
        "tie_word_embeddings": BOOLEAN,
        "relative_attention_num_buckets": POSITIVE_INT,
        "relative_attention_max_distance": POSITIVE_INT,
        "layer_norm_epsilon": POSITIVE_FLOAT,
        "initializer_factor": POSITIVE_FLOAT,
    }
    # T5's head width is its own (`d_kv`): no divisibility rule.
    argument_rules = ()

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, key_value_dim=None,
                 num_decoder_layers=None, dropout=0.1, activation="relu",
                 gated_feed_forward=False, tie_word_embeddings=True,
                 relative_attention_num_buckets=32,
                 relative_attention_max_distance=128,
                 layer_norm_epsilon=1e-6, initializer_factor=1.0,
                 dtype=None, **kwargs):
        if key_value_dim is None:
            key_value_dim = hidden_dim // num_heads
        if num_decoder_layers is None:
            num_decoder_layers = num_layers
        init = t5_kernel_initializer(initializer_factor)

        # === Layers ===
        token_embedding = TokenEmbedding(
            vocabulary_size, hidden_dim, dtype=dtype,
            embeddings_initializer=keras.initializers.RandomNormal(
                stddev=initializer_factor),
            name="token_embedding")
        block_args = dict(
            num_heads=num_heads, intermediate_dim=intermediate_dim,
            activation=activation, dropout=dropout,
            attention_dropout=dropout, activation_dropout=dropout,
            layer_norm_epsilon=layer_norm_epsilon, normalize_first=True,
            kernel_initializer=init, head_dim=key_value_dim, use_bias=False,
            attention_scale=1.0, normalization="rms_norm",
            gated_feed_forward=gated_feed_forward, dtype=dtype)
        bias_init = keras.initializers.RandomNormal(
            stddev=initializer_factor * hidden_dim ** -0.5)
        stacks = {}
        for side, block_cls, count, bidirectional in (
                ("encoder", TransformerBlock, num_layers, True),
                ("decoder", TransformerDecoderBlock, num_decoder_layers,
                 False)):
            stacks[side] = dict(
                dropout=Dropout(
                    dropout, dtype=dtype, name=f"{side}_embeddings_dropout"),
                position_bias=RelativePositionBias(
                    num_heads, relative_attention_num_buckets,
                    relative_attention_max_distance,
                    bidirectional=bidirectional,
                    embeddings_initializer=bias_init, dtype=dtype,
                    name=f"{side}_position_bias"),
                blocks=[block_cls(name=f"{side}_transformer_layer_{i}",
                                  **block_args) for i in range(count)],
                layer_norm=RMSNorm(layer_norm_epsilon, dtype=dtype,
                                   name=f"{side}_layer_norm"),
                output_dropout=Dropout(
                    dropout, dtype=dtype, name=f"{side}_output_dropout"))
        decoder_mask_layer = CausalPaddingMask(
            dtype=dtype, name="decoder_attention_mask")

        # === Functional model ===
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in self.input_names}
        # Encoder: every query may attend to every real token.
        encoder_mask = padding_attention_mask(inputs["encoder_padding_mask"])
        stack = stacks["encoder"]
        x = stack["dropout"](token_embedding(inputs["encoder_token_ids"]))
        bias = stack["position_bias"](x)  # (1, heads, src, src), once
        for block in stack["blocks"]:
            x = block(x, attention_mask=encoder_mask, attention_bias=bias)
        encoder_output = stack["output_dropout"](stack["layer_norm"](x))
        # Decoder: causal and padding mask on itself, the encoder's padding
        # mask on the cross-attention (which has no position bias).
        stack = stacks["decoder"]
        y = stack["dropout"](token_embedding(inputs["decoder_token_ids"]))
        bias = stack["position_bias"](y)  # (1, heads, tgt, tgt)
        decoder_mask = decoder_mask_layer(inputs["decoder_padding_mask"])
        for block in stack["blocks"]:
            y = block(y, attention_mask=decoder_mask, attention_bias=bias,
                      encoder_outputs=encoder_output,
                      encoder_attention_mask=encoder_mask)
        decoder_output = stack["output_dropout"](stack["layer_norm"](y))

        super().__init__(
            inputs=inputs,
            outputs={"encoder_sequence_output": encoder_output,
                     "decoder_sequence_output": decoder_output},
            dtype=dtype, **kwargs)
        self.key_value_dim = key_value_dim
        self.num_decoder_layers = num_decoder_layers
        self.encoder_blocks = stacks["encoder"]["blocks"]
        self.decoder_blocks = stacks["decoder"]["blocks"]
        self._fold_query_scale(key_value_dim)

    def _fold_query_scale(self, key_value_dim):
        # T5 has no 1/sqrt(head_dim) on its logits; its initialisation
        # puts it in the query kernels instead (N(0, 1 / (d_model * d_kv))).
        for block in self.encoder_blocks + self.decoder_blocks:
            for attention in (block.attention,
                              getattr(block, "cross_attention", None)):
                if attention is not None:
                    kernel = attention.query_dense.kernel
                    kernel.assign(kernel * key_value_dim ** -0.5)

    @property
    def max_sequence_length(self):
        return None  # relative positions: no table, no limit

    # ------------------------------------------------------------------
    # How each stack begins and ends (see EncoderDecoderBackbone)
    # ------------------------------------------------------------------
    def _embed(self, side, token_ids, start_index=0):
        return self.token_embedding(token_ids)  # positions: the bias

    def _position_bias(self, side, x, key_length=None, start_index=0):
        return self.get_layer(f"{side}_position_bias")(
            x, key_length=key_length, start_index=start_index)

    def _finish(self, side, x):
        return self.get_layer(f"{side}_layer_norm")(x)

    def _decoder_heads(self):
        return self.num_heads, self.key_value_dim

    def kernel_initializer(self):
        return t5_kernel_initializer(self.initializer_factor)
