"""The encoder-decoder's decoder block: causal self-attention (cached),
cross-attention over the encoder's output, feed-forward.

Pre-LN (`normalize_first=True`, T5):
    x = x + Dropout(SelfAttn(LN(x)))
    x = x + Dropout(CrossAttn(LN(x), encoder_outputs))
    x = x + Dropout(FFN(LN(x)))
Post-LN (`normalize_first=False`, BART):
    x = LN(x + Dropout(SelfAttn(x)))
    x = LN(x + Dropout(CrossAttn(x, encoder_outputs)))
    x = LN(x + Dropout(FFN(x)))

The self-attention sublayer, the FFN (plain or gated) and every option are
`TransformerBlock`'s; this block adds the cross-attention sublayer between
them. Norms, in order: `attention_layer_norm` (T5 `layer.0.layer_norm`,
BART `self_attn_layer_norm`), `cross_attention_layer_norm` (`layer.1`,
`encoder_attn_layer_norm`), `output_layer_norm` (`layer.2`,
`final_layer_norm`).
"""

from kzoo.layers.transformer_block import TransformerBlock


class TransformerDecoderBlock(TransformerBlock):
    """Self-attention + cross-attention + FFN; takes `TransformerBlock`'s
    arguments (normalisation, biases, logit scale, gated FFN, ...), which
    apply to both attentions.

    Call arguments:
        x: `(batch, seq, hidden)`, the decoder's states.
        attention_mask: boolean, broadcastable to `(batch, seq, seq_k)`, of
            the self-attention (causal, and padding).
        attention_bias: float, broadcastable to `(batch, heads, seq,
            seq_k)`, added to the self-attention logits (T5's relative
            position bias; the cross-attention has none in T5 or BART).
        encoder_outputs: `(batch, src, hidden)`, what the cross-attention
            attends to; keys/values are projected from it.
        encoder_attention_mask: boolean, broadcastable to `(batch, seq,
            src)`: `True` at real encoder tokens (a padding mask `(batch,
            src)` becomes `mask[:, None, :]`).
        cross_attention_cache: `(batch, 2, src, heads, head_dim)` from
            `compute_cross_attention_cache(encoder_outputs)`, instead of
            `encoder_outputs`: the projection is done once per generation,
            not once per step.
        cache, cache_index: the self-attention key/value cache
            `(batch, 2, max_len, heads, head_dim)` and where this call's
            positions go in it.

    Returns `x`, or `(x, cache)` with a self-attention cache.
    """

    def build(self, input_shape):
        super().build(input_shape)
        self.cross_attention = self._attention_layer("cross_attention",
                                                     input_shape)
        self.cross_attention_layer_norm = self._norm_layer(
            "cross_attention_layer_norm", input_shape)

    def compute_cross_attention_cache(self, encoder_outputs):
        """`(batch, src, hidden)` -> keys/values `(batch, 2, src, heads,
        head_dim)` of the cross-attention."""
        return self.cross_attention.compute_context_cache(encoder_outputs)

    def _cross_attention_sublayer(self, x, encoder_outputs,
                                  encoder_attention_mask,
                                  cross_attention_cache, training):
        h = self.cross_attention_layer_norm(x) if self.normalize_first else x
        attended = self.cross_attention(
            h, attention_mask=encoder_attention_mask, context=encoder_outputs,
            context_cache=cross_attention_cache, training=training)
        return self._residual(x, attended, self.cross_attention_layer_norm,
                              training)

    def call(self, x, attention_mask=None, cache=None, cache_index=None,
             attention_bias=None, encoder_outputs=None,
             encoder_attention_mask=None, cross_attention_cache=None,
             training=None):
        if (encoder_outputs is None) == (cross_attention_cache is None):
            raise ValueError(
                "TransformerDecoderBlock needs exactly one of "
                "`encoder_outputs` and `cross_attention_cache`.")
        x, cache = self._self_attention_sublayer(
            x, attention_mask, attention_bias, cache, cache_index, training)
        x = self._cross_attention_sublayer(
            x, encoder_outputs, encoder_attention_mask,
            cross_attention_cache, training)
        x = self._feed_forward_sublayer(x, training)
        if cache is not None:
            return x, cache
        return x
