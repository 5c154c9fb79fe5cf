"""What every encoder-decoder backbone (T5, BART) shares: its four inputs,
its Megatron layout, and the pieces generation calls one at a time
(`kzoo.tasks.seq2seq_lm`): encode once, project the cross-attention
keys/values once, then decode with a self-attention cache."""

from keras import ops

from kzoo.distribution.layouts import COLUMN, EMBEDDING, ROW
from kzoo.layers import causal_mask
from kzoo.layers.encoder_stack import padding_attention_mask
from kzoo.core.backbone import Backbone


class EncoderDecoderBackbone(Backbone):
    """An encoder stack and a decoder stack over one shared embedding.

    A family builds `self.encoder_blocks` and `self.decoder_blocks` (blocks
    taking `attention_mask`, and, in the decoder, the encoder's outputs or
    cross-attention cache) and says how each stack begins and ends:

    - `_embed(side, token_ids, start_index)`: the stack's input vectors
      (`side` is "encoder" or "decoder"; `start_index`, the first token's
      position, for learned positions);
    - `_position_bias(side, x, key_length, start_index)`: an attention bias
      added in every block (T5's relative positions), or None;
    - `_finish(side, x)`: after the last block (T5's final norm);
    - `_decoder_heads()`: `(heads, head_dim)` of the self-attention cache.
    """

    input_names = ("encoder_token_ids", "encoder_padding_mask",
                   "decoder_token_ids", "decoder_padding_mask")
    input_axes = {
        "encoder_token_ids": ("batch", "encoder_sequence"),
        "encoder_padding_mask": ("batch", "encoder_sequence"),
        "decoder_token_ids": ("batch", "decoder_sequence"),
        "decoder_padding_mask": ("batch", "decoder_sequence"),
    }

    def _embed(self, side, token_ids, start_index=0):
        raise NotImplementedError

    def _position_bias(self, side, x, key_length=None, start_index=0):
        return None

    def _finish(self, side, x):
        return x

    def _decoder_heads(self):
        raise NotImplementedError

    def id_limits(self):
        return {"encoder_token_ids": self.vocabulary_size,
                "decoder_token_ids": self.vocabulary_size}

    # ------------------------------------------------------------------
    # The pieces, for generation (inference: no dropout)
    # ------------------------------------------------------------------
    def encode(self, token_ids, padding_mask):
        """The encoder alone: `(batch, src)` ids and padding mask ->
        `(batch, src, hidden_dim)`."""
        mask = padding_attention_mask(padding_mask)
        x = self._embed("encoder", token_ids)
        bias = _bias_argument(self._position_bias("encoder", x))
        for block in self.encoder_blocks:
            x = block(x, attention_mask=mask, training=False, **bias)
        return self._finish("encoder", x)

    def decode(self, token_ids, encoder_output, encoder_padding_mask):
        """The decoder alone, without a cache: `(batch, tgt)` ids (no
        padding) over `encoder_output` -> `(batch, tgt, hidden_dim)`."""
        length = ops.shape(token_ids)[1]
        x = self._embed("decoder", token_ids)
        bias = _bias_argument(self._position_bias("decoder", x))
        cross_mask = padding_attention_mask(encoder_padding_mask)
        for block in self.decoder_blocks:
            x = block(x, attention_mask=causal_mask(length, length),
                      encoder_outputs=encoder_output,
                      encoder_attention_mask=cross_mask, training=False,
                      **bias)
        return self._finish("decoder", x)

    def cross_attention_caches(self, encoder_output):
        """Each decoder block's cross-attention keys/values, projected
        once per generation."""
        return [block.compute_cross_attention_cache(encoder_output)
                for block in self.decoder_blocks]

    def init_cache(self, batch_size, max_length):
        """Zero self-attention caches, `(batch, 2, max_length, heads,
        head_dim)` per decoder block."""
        shape = (batch_size, 2, max_length) + tuple(self._decoder_heads())
        dtype = self.dtype_policy.compute_dtype
        return [ops.zeros(shape, dtype=dtype) for _ in self.decoder_blocks]

    def decode_with_cache(self, token_ids, cache, cache_index,
                          encoder_padding_mask, cross_caches):
        """The decoder on `token_ids (batch, T)` at positions `cache_index
        ..`, attending to cached keys before them. Returns
        `(hidden (batch, T, hidden_dim), cache)`."""
        length, max_length = ops.shape(token_ids)[1], ops.shape(cache[0])[2]
        x = self._embed("decoder", token_ids, start_index=cache_index)
        bias = _bias_argument(self._position_bias(
            "decoder", x, key_length=max_length, start_index=cache_index))
        mask = causal_mask(length, max_length, cache_index)
        cross_mask = padding_attention_mask(encoder_padding_mask)
        new_cache = []
        for block, layer_cache, cross in zip(self.decoder_blocks, cache,
                                             cross_caches):
            x, layer_cache = block(
                x, attention_mask=mask, cross_attention_cache=cross,
                encoder_attention_mask=cross_mask, cache=layer_cache,
                cache_index=cache_index, training=False, **bias)
            new_cache.append(layer_cache)
        return self._finish("decoder", x), new_cache

    @classmethod
    def layout_rules(cls):
        block = r"(.*/)?(encoder|decoder)_transformer_layer_\d+"
        attention = block + r"/(attention|cross_attention)"
        return {
            r"(.*/)?token_embedding/embeddings": EMBEDDING,
            attention + r"/(query|key|value)/kernel": COLUMN,
            attention + r"/output/kernel": ROW,
            # T5 v1.1's gated FFN has a second input projection.
            block + r"/(intermediate_dense|intermediate_linear_dense)"
                    r"/kernel": COLUMN,
            block + r"/output_dense/kernel": ROW,
        }


def _bias_argument(bias):
    """The blocks' `attention_bias` keyword, only where there is one."""
    return {} if bias is None else {"attention_bias": bias}
