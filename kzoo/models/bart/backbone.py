"""BART (Lewis et al., 2020): a post-LN encoder-decoder with learned
positions, a LayerNorm on the embeddings and GELU."""

import keras

from kzoo.layers import (CausalPaddingMask, PositionEmbedding, TokenEmbedding,
                         TransformerBlock, TransformerDecoderBlock)
from kzoo.layers.dropout import Dropout
from kzoo.layers.encoder_stack import padding_attention_mask
from kzoo.core.arguments import (ACTIVATION, BOOLEAN, FRACTION,
                                   POSITIVE_FLOAT, POSITIVE_INT, Divisible,
                                   Optional)
from kzoo.core.encoder_decoder import EncoderDecoderBackbone
from kzoo.core.registry import register

# fairseq numbered positions after the padding index (1), so position 0
# is row 2 of the table; Hugging Face keeps the two unused rows.
POSITION_OFFSET = 2


class _DecoderDivisible(Divisible):
    """`Divisible` for a decoder setting that may be None ("as the
    encoder's", then the encoder's rule covers it)."""

    def bad_example(self, values):
        if values.get(self.divisor) is None:
            return {self.divisor: values[self.dividend] + 1}
        return super().bad_example(values)


@register
class BartBackbone(EncoderDecoderBackbone):
    """The BART encoder-decoder.

    Each stack: shared token embedding (times `sqrt(hidden_dim)` with
    `scale_embedding`) + its own learned positions (row `position + 2`)
    -> LayerNorm (`layernorm_embedding`) -> dropout -> post-LN blocks
    (GELU FFN; the decoder's with causal self-attention and
    cross-attention over the encoder output). No final norm: the last
    block's post-LN is the output. The LM head is the task's
    (`BartSeq2SeqLM`).

    Inputs (a dict):
        encoder_token_ids, encoder_padding_mask: `(batch, src)`.
        decoder_token_ids, decoder_padding_mask: `(batch, tgt)`, the target
            shifted right (the decoder starts from `</s>`, id 2).
        Padding goes on the right (positions count from 0 in each row).

    Outputs (a dict): `encoder_sequence_output (batch, src, hidden_dim)`
    and `decoder_sequence_output (batch, tgt, hidden_dim)`.

    Args:
        vocabulary_size: rows of the shared embedding (50,265).
        num_layers, num_heads, intermediate_dim: the encoder's blocks,
            heads and FFN width (`encoder_layers`,
            `encoder_attention_heads`, `encoder_ffn_dim`).
        num_decoder_layers, num_decoder_heads, decoder_intermediate_dim:
            the decoder's (None: as the encoder's).
        hidden_dim: `d_model`.
        max_sequence_length: positions of each stack (1,024).
        dropout: on embeddings and sublayer outputs; attention_dropout on
            the attention probabilities; activation_dropout after the FFN
            activation.
        activation: FFN activation (`"gelu"`, exact).
        scale_embedding: multiply token embeddings by `sqrt(hidden_dim)`.
        layer_norm_epsilon: of every LayerNorm (torch's default, 1e-5).
        initializer_range: std of the normal initialisation (`init_std`).

    Example:
    ```python
    backbone = kzoo.BartBackbone.from_preset("bart_base_en",
                                             load_weights=False)
    out = backbone({
        "encoder_token_ids": np.array([[0, 31414, 232, 2]]),
        "encoder_padding_mask": np.ones((1, 4), "int32"),
        "decoder_token_ids": np.array([[2, 0]]),
        "decoder_padding_mask": np.ones((1, 2), "int32")})
    out["decoder_sequence_output"].shape  # (1, 2, 768)
    ```
    """

    family = "bart"
    argument_spec = {
        "vocabulary_size": POSITIVE_INT,
        "num_layers": POSITIVE_INT,
        "num_heads": POSITIVE_INT,
        "hidden_dim": POSITIVE_INT,
        "intermediate_dim": POSITIVE_INT,
        "max_sequence_length": POSITIVE_INT,
        "num_decoder_layers": Optional(POSITIVE_INT),
        "num_decoder_heads": Optional(POSITIVE_INT),
        "decoder_intermediate_dim": Optional(POSITIVE_INT),
        "dropout": FRACTION,
        "attention_dropout": FRACTION,
        "activation_dropout": FRACTION,
        "activation": ACTIVATION,
        "scale_embedding": BOOLEAN,
        "layer_norm_epsilon": POSITIVE_FLOAT,
        "initializer_range": POSITIVE_FLOAT,
    }
    argument_rules = (Divisible("hidden_dim", "num_heads"),
                      _DecoderDivisible("hidden_dim", "num_decoder_heads"))

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, max_sequence_length=1024,
                 num_decoder_layers=None, num_decoder_heads=None,
                 decoder_intermediate_dim=None, dropout=0.1,
                 attention_dropout=0.0, activation_dropout=0.0,
                 activation="gelu", scale_embedding=False,
                 layer_norm_epsilon=1e-5, initializer_range=0.02,
                 dtype=None, **kwargs):
        num_decoder_layers = num_decoder_layers or num_layers
        num_decoder_heads = num_decoder_heads or num_heads
        decoder_intermediate_dim = decoder_intermediate_dim or \
            intermediate_dim
        init = keras.initializers.RandomNormal(stddev=initializer_range)

        # === Layers ===
        token_embedding = TokenEmbedding(
            vocabulary_size, hidden_dim, embeddings_initializer=init,
            dtype=dtype, name="token_embedding")
        block_args = dict(
            activation=activation, dropout=dropout,
            attention_dropout=attention_dropout,
            activation_dropout=activation_dropout,
            layer_norm_epsilon=layer_norm_epsilon, normalize_first=False,
            kernel_initializer=init, dtype=dtype)
        stacks = {}
        for side, block_cls, count, heads, width in (
                ("encoder", TransformerBlock, num_layers, num_heads,
                 intermediate_dim),
                ("decoder", TransformerDecoderBlock, num_decoder_layers,
                 num_decoder_heads, decoder_intermediate_dim)):
            stacks[side] = dict(
                positions=PositionEmbedding(
                    max_sequence_length + POSITION_OFFSET, hidden_dim,
                    initializer=init, dtype=dtype,
                    name=f"{side}_position_embedding"),
                layer_norm=keras.layers.LayerNormalization(
                    epsilon=layer_norm_epsilon, dtype=dtype,
                    name=f"{side}_embeddings_layer_norm"),
                dropout=Dropout(
                    dropout, dtype=dtype, name=f"{side}_embeddings_dropout"),
                blocks=[block_cls(heads, width,
                                  name=f"{side}_transformer_layer_{i}",
                                  **block_args) for i in range(count)])
        decoder_mask_layer = CausalPaddingMask(
            dtype=dtype, name="decoder_attention_mask")
        embedding_scale = hidden_dim ** 0.5 if scale_embedding else 1.0

        def embed(stack, token_ids, start_index=0, training=None):
            tokens = token_embedding(token_ids)
            if scale_embedding:
                tokens = tokens * embedding_scale
            x = tokens + stack["positions"](
                tokens, start_index=start_index + POSITION_OFFSET)
            return stack["dropout"](stack["layer_norm"](x),
                                    training=training)

        # === Functional model ===
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in self.input_names}
        encoder_mask = padding_attention_mask(inputs["encoder_padding_mask"])
        x = embed(stacks["encoder"], inputs["encoder_token_ids"])
        for block in stacks["encoder"]["blocks"]:
            x = block(x, attention_mask=encoder_mask)
        encoder_output = x
        y = embed(stacks["decoder"], inputs["decoder_token_ids"])
        decoder_mask = decoder_mask_layer(inputs["decoder_padding_mask"])
        for block in stacks["decoder"]["blocks"]:
            y = block(y, attention_mask=decoder_mask,
                      encoder_outputs=encoder_output,
                      encoder_attention_mask=encoder_mask)

        super().__init__(
            inputs=inputs,
            outputs={"encoder_sequence_output": encoder_output,
                     "decoder_sequence_output": y},
            dtype=dtype, **kwargs)
        self.num_decoder_layers = num_decoder_layers
        self.num_decoder_heads = num_decoder_heads
        self.decoder_intermediate_dim = decoder_intermediate_dim
        self.encoder_blocks = stacks["encoder"]["blocks"]
        self.decoder_blocks = stacks["decoder"]["blocks"]
        self._stacks = stacks
        self._embed_stack = embed

    # ------------------------------------------------------------------
    # How each stack begins (see EncoderDecoderBackbone; no final norm)
    # ------------------------------------------------------------------
    def _embed(self, side, token_ids, start_index=0):
        return self._embed_stack(self._stacks[side], token_ids,
                                 start_index=start_index, training=False)

    def _decoder_heads(self):
        return (self.num_decoder_heads,
                self.hidden_dim // self.num_decoder_heads)

    def kernel_initializer(self):
        return keras.initializers.RandomNormal(stddev=self.initializer_range)
