"""Encoder-decoder models (T5, BART) in the generate loops.

The loops of `loop.py` decode through the decoder protocol (a decoder-only
model such as `GPT2CausalLM` implements it):

    generation_cache(batch, max_length) -> cache
    generation_prefill(prefix, cache) -> cache
    generation_step(token_ids (batch, 1), cache, index) -> (logits, cache)
    generation_logits(token_ids (batch, max_length), index) -> logits

An encoder-decoder model implements the encoder-decoder protocol: one more
method, which runs the encoder, and the same four taking what it returned
as their last argument.

    generation_encode(encoder_token_ids (batch, src) int32,
                      encoder_padding_mask (batch, src) int32)
        -> encoder_state
        Runs the encoder, once per `generate` call (inside the compiled
        program). `encoder_state` is a list of tensors, each with the batch
        on axis 0; what it holds is the model's business, typically the
        encoder output `(batch, src, hidden)`, the padding mask, and each
        decoder layer's cross-attention keys/values
        (`TransformerDecoderBlock.compute_cross_attention_cache`), so no
        decoding step projects the encoder output again. The loops never
        look inside: beam search repeats every tensor `num_beams` times
        along the batch (a row's copies adjacent, as the beams are laid
        out), and the state is handed back unchanged to:
    generation_cache(batch, max_length) -> cache
        the decoder's self-attention cache (a list of tensors, batch on
        axis 0; beam search reorders it), zeros.
    generation_prefill(prefix (batch, P), cache, encoder_state) -> cache
        the self-attention keys/values of decoder positions `0 .. P - 1`.
    generation_step(token_ids (batch, 1), cache, index, encoder_state)
        -> (logits (batch, vocab), cache)
        the decoder token at position `index`; logits predict `index + 1`.
    generation_logits(token_ids (batch, max_length), index, encoder_state)
        -> logits (batch, vocab)
        without a cache: the whole decoder again (`use_cache=False`, and
        the reference the cached path is tested against).

Decoder prompts are the decoder's first tokens: the decoder start token
(T5: the pad id; BART: `</s>`), or a forced prefix; prompts of different
lengths share one loop as in the decoder-only case. The loops take the
encoder inputs as two more arguments after `rng` (see `loop.py`);
`seq2seq.generate_seq2seq` is the driver a model's `generate` calls.
"""

from keras import ops


class EncodedDecoder:
    """An encoder-decoder model and its encoder state, seen through the
    decoder protocol that the loops decode with."""

    def __init__(self, model, encoder_state):
        self.model = model
        self.encoder_state = encoder_state

    def generation_cache(self, batch_size, max_length):
        return self.model.generation_cache(batch_size, max_length)

    def generation_prefill(self, token_ids, cache):
        return self.model.generation_prefill(token_ids, cache,
                                             self.encoder_state)

    def generation_step(self, token_ids, cache, index):
        return self.model.generation_step(token_ids, cache, index,
                                          self.encoder_state)

    def generation_logits(self, token_ids, index):
        return self.model.generation_logits(token_ids, index,
                                            self.encoder_state)


def decoder_for(model, encoder_inputs, repeats=1):
    """What a loop decodes with: the model itself (decoder-only: no
    encoder inputs), or the model bound to its encoder state, each row's
    state repeated `repeats` times (beam search)."""
    if not encoder_inputs:
        return model
    encoder_inputs = [ops.cast(x, "int32") for x in encoder_inputs]
    state = list(model.generation_encode(*encoder_inputs))
    if repeats > 1:
        # Encoding once and repeating the result is cheaper than encoding
        # every beam's copy of the input.
        state = [ops.repeat(x, repeats, axis=0) for x in state]
    return EncodedDecoder(model, state)
