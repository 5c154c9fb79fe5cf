"""Encoder-decoder generation (`kzoo.generation.generate_seq2seq`) on a
tiny encoder-decoder built here from kzoo.layers with random weights, in
two styles: T5 (pre-LN RMSNorm, no biases, no logit scaling, relative
position bias, gated FFN) and BART (post-LN LayerNorm, biases, learned
positions). The model implements the protocol of
`kzoo/generation/encoder_decoder.py`."""

import keras
import numpy as np
import pytest
from keras import ops

from kzoo.generation import BeamSampler, TopKSampler, generate_seq2seq
from kzoo.layers import (PositionEmbedding, RelativePositionBias, RMSNorm,
                         TokenEmbedding, TransformerBlock,
                         TransformerDecoderBlock, causal_mask)

VOCAB, HIDDEN, HEADS, HEAD_DIM, LAYERS, FFN = 61, 32, 4, 6, 2, 48
PAD, START, EOS = 0, 0, 1  # T5's ids: the decoder starts from the pad id


class TinySeq2Seq(keras.Model):
    """A two-layer encoder-decoder with an untied LM head (as T5 v1.1;
    random tied embeddings mostly repeat the last token)."""

    def __init__(self, style="t5", **kwargs):
        super().__init__(**kwargs)
        self.t5 = style == "t5"
        args = dict(num_heads=HEADS, intermediate_dim=FFN, dropout=0.0,
                    attention_dropout=0.0, normalize_first=self.t5,
                    layer_norm_epsilon=1e-6)
        if self.t5:
            args.update(head_dim=HEAD_DIM, use_bias=False,
                        attention_scale=1.0, normalization="rms_norm",
                        gated_feed_forward=True, activation="gelu_new")
        self.head_dim = HEAD_DIM if self.t5 else HIDDEN // HEADS
        self.token_embedding = TokenEmbedding(VOCAB, HIDDEN)
        self.lm_head = keras.layers.Dense(VOCAB, use_bias=False)
        self.encoder_blocks = [TransformerBlock(**args)
                               for _ in range(LAYERS)]
        self.decoder_blocks = [TransformerDecoderBlock(**args)
                               for _ in range(LAYERS)]
        if self.t5:
            self.encoder_position_bias = RelativePositionBias(
                HEADS, num_buckets=8, max_distance=16, bidirectional=True)
            self.decoder_position_bias = RelativePositionBias(
                HEADS, num_buckets=8, max_distance=16, bidirectional=False)
            self.encoder_norm = RMSNorm(1e-6)
            self.decoder_norm = RMSNorm(1e-6)
        else:
            self.encoder_positions = PositionEmbedding(64, HIDDEN)
            self.decoder_positions = PositionEmbedding(64, HIDDEN)
            self.encoder_norm = keras.layers.LayerNormalization()
            self.decoder_norm = keras.layers.LayerNormalization()

    # The forward passes -------------------------------------------------
    def encode(self, token_ids, padding_mask):
        x = self.token_embedding(token_ids)  # (batch, src, hidden)
        mask = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)
        bias = None
        if self.t5:
            bias = self.encoder_position_bias(x)  # once, for every layer
        else:
            x = self.encoder_norm(x + self.encoder_positions(x))
        for block in self.encoder_blocks:
            x = block(x, attention_mask=mask, attention_bias=bias)
        return self.encoder_norm(x) if self.t5 else x

    def _embed(self, token_ids, start_index):
        x = self.token_embedding(token_ids)  # (batch, T, hidden)
        if self.t5:
            return x
        return self.decoder_norm(
            x + self.decoder_positions(x, start_index=start_index))

    def _logits(self, x):
        if self.t5:
            x = self.decoder_norm(x)
        return self.lm_head(x)

    def decode(self, token_ids, encoder_outputs, encoder_padding_mask):
        """The whole decoder, no cache: logits `(batch, T, vocab)`."""
        x = self._embed(token_ids, 0)
        length = ops.shape(token_ids)[1]
        bias = self.decoder_position_bias(x) if self.t5 else None
        cross_mask = ops.expand_dims(ops.cast(encoder_padding_mask, "bool"),
                                     1)
        for block in self.decoder_blocks:
            x = block(x, attention_mask=causal_mask(length, length),
                      attention_bias=bias, encoder_outputs=encoder_outputs,
                      encoder_attention_mask=cross_mask)
        return self._logits(x)

    def call(self, inputs):
        encoder_outputs = self.encode(inputs["encoder_token_ids"],
                                      inputs["encoder_padding_mask"])
        return self.decode(inputs["decoder_token_ids"], encoder_outputs,
                           inputs["encoder_padding_mask"])

    # The encoder-decoder protocol of kzoo.generation ---------------------
    def generation_encode(self, token_ids, padding_mask):
        encoder_outputs = self.encode(token_ids, padding_mask)
        cross_caches = [block.compute_cross_attention_cache(encoder_outputs)
                        for block in self.decoder_blocks]
        return [encoder_outputs, padding_mask] + cross_caches

    def generation_cache(self, batch_size, max_length):
        shape = (batch_size, 2, max_length, HEADS, self.head_dim)
        return [ops.zeros(shape) for _ in self.decoder_blocks]

    def _decode_cached(self, token_ids, cache, index, encoder_state):
        _, padding_mask, *cross_caches = encoder_state
        x = self._embed(token_ids, index)
        length, max_length = ops.shape(token_ids)[1], ops.shape(cache[0])[2]
        bias = None
        if self.t5:  # (1, heads, T, max_length)
            bias = self.decoder_position_bias(x, key_length=max_length,
                                              start_index=index)
        cross_mask = ops.expand_dims(ops.cast(padding_mask, "bool"), 1)
        new_cache = []
        for block, layer_cache, cross_cache in zip(self.decoder_blocks, cache,
                                                   cross_caches):
            x, layer_cache = block(
                x, attention_mask=causal_mask(length, max_length, index),
                attention_bias=bias, cross_attention_cache=cross_cache,
                encoder_attention_mask=cross_mask, cache=layer_cache,
                cache_index=index)
            new_cache.append(layer_cache)
        return x, new_cache

    def generation_prefill(self, token_ids, cache, encoder_state):
        return self._decode_cached(token_ids, cache, 0, encoder_state)[1]

    def generation_step(self, token_ids, cache, index, encoder_state):
        x, cache = self._decode_cached(token_ids, cache, index, encoder_state)
        return self._logits(x[:, -1]), cache  # (batch, vocab)

    def generation_logits(self, token_ids, index, encoder_state):
        logits = self.decode(token_ids, encoder_state[0], encoder_state[1])
        batch = ops.shape(token_ids)[0]
        logits = ops.slice(logits, [0, index, 0], [batch, 1, VOCAB])
        return ops.squeeze(logits, 1)

    def generate(self, inputs, max_length=None, sampler="greedy", **kwargs):
        return generate_seq2seq(
            self, inputs, max_length, sampler, vocabulary_size=VOCAB,
            position_limit=None if self.t5 else 64,
            encoder_length_limit=None if self.t5 else 64,
            decoder_start_token_id=START, pad_token_id=PAD,
            default_stop_token_ids=(EOS,), **kwargs)


def tiny_seq2seq(style, seed=0):
    keras.utils.set_random_seed(seed)
    model = TinySeq2Seq(style)
    # Built on the shapes the eager references below use (3 sources of
    # at most 7 tokens, LENGTH decoder tokens): jax compiles each eager op
    # once per shape.
    model({"encoder_token_ids": np.ones((3, 7), "int32"),
           "encoder_padding_mask": np.ones((3, 7), "int32"),
           "decoder_token_ids": np.ones((3, LENGTH), "int32")})
    return model


_MODELS = {}


def shared_model(style):
    # One model per style for the whole module: tests with the same shapes
    # then share its compiled programs.
    if style not in _MODELS:
        _MODELS[style] = tiny_seq2seq(style)
    return _MODELS[style]


@pytest.fixture(params=["t5", "bart"])
def model(request):
    return shared_model(request.param)


@pytest.fixture
def t5():
    return shared_model("t5")


# Most tests decode to one length (the start token and 7 new tokens), so
# they share compiled programs: a program is built per sampler, stop
# tokens, cache use and shape (see kzoo.generation.generate), and building
# one costs seconds where running it costs milliseconds.
NEW_TOKENS = 7
LENGTH = 1 + NEW_TOKENS


def sources(lengths=(3, 7, 5), seed=0):
    rng = np.random.default_rng(seed)
    return [rng.integers(2, VOCAB, n).tolist() for n in lengths]


def to_numpy(x):
    return np.asarray(ops.convert_to_numpy(x))


def padded_sources(inputs):
    """`(token_ids, padding_mask)` of id lists padded to their longest (not
    to the generate loop's power of two)."""
    width = max(len(s) for s in inputs)
    token_ids = np.zeros((len(inputs), width), "int32")
    mask = np.zeros((len(inputs), width), "int32")
    for i, s in enumerate(inputs):
        token_ids[i, :len(s)], mask[i, :len(s)] = s, 1
    return token_ids, mask


def reference_greedy(model, inputs, new_tokens):
    """Greedy decoding the slow way, eagerly: the encoder on inputs padded
    to their longest, then the whole decoder again for every new token.
    The decoder always reads the full width (tokens not yet decoded are
    placeholders that the causal mask hides from earlier positions): one
    shape, so jax compiles its eager ops once, not once per length."""
    token_ids, mask = padded_sources(inputs)
    encoder_outputs = model.encode(token_ids, mask)
    decoded = np.full((len(inputs), 1 + new_tokens), START, "int32")
    for i in range(new_tokens):
        logits = to_numpy(model.decode(decoded, encoder_outputs, mask))
        decoded[:, i + 1] = logits[:, i].argmax(-1)
    return decoded.tolist()


# ----------------------------------------------------------------------
# Cached decoding is exact
# ----------------------------------------------------------------------
def test_cached_greedy_equals_rerunning_the_decoder(model):
    inputs = sources()
    cached = model.generate(inputs, max_new_tokens=NEW_TOKENS,
                            stop_token_ids=None)
    assert cached == reference_greedy(model, inputs, NEW_TOKENS)
    assert len({tuple(c) for c in cached}) == 3  # not degenerate
    uncached = model.generate(inputs, max_new_tokens=NEW_TOKENS,
                              stop_token_ids=None, use_cache=False)
    assert uncached == cached


def test_beam_search_with_one_beam_is_greedy(model):
    inputs = sources()
    greedy = model.generate(inputs, max_new_tokens=NEW_TOKENS,
                            stop_token_ids=None)
    beam = model.generate(inputs, max_new_tokens=NEW_TOKENS,
                          stop_token_ids=None,
                          sampler=BeamSampler(num_beams=1))
    assert beam == greedy


@pytest.mark.parametrize("sampler", [
    TopKSampler(k=5), "top_p", BeamSampler(num_beams=3)],
    ids=["top_k", "top_p", "beam"])
def test_every_sampler_cached_equals_uncached(t5, sampler):
    inputs = sources()
    cached = t5.generate(inputs, max_new_tokens=NEW_TOKENS, sampler=sampler,
                         seed=5, stop_token_ids=None)
    uncached = t5.generate(inputs, max_new_tokens=NEW_TOKENS, sampler=sampler,
                           seed=5, stop_token_ids=None, use_cache=False)
    assert cached == uncached
    again = t5.generate(inputs, max_new_tokens=NEW_TOKENS, sampler=sampler,
                        seed=5, stop_token_ids=None)
    assert again == cached  # seeded: reproducible


def test_beam_search_finds_a_likelier_sequence_than_greedy(t5):
    # Scored by the model itself (summed log-probabilities of the new
    # tokens): the best of 3 beams is at least as likely as greedy. With
    # no stop token every beam has the same length, so the length penalty
    # does not reorder them (and the sampler is the one the test above
    # compiled).
    inputs = sources()
    greedy = t5.generate(inputs, max_new_tokens=NEW_TOKENS,
                         stop_token_ids=None)
    beam = t5.generate(inputs, max_new_tokens=NEW_TOKENS,
                       stop_token_ids=None, sampler=BeamSampler(num_beams=3))
    token_ids, mask = padded_sources(inputs)
    encoder_outputs = t5.encode(token_ids, mask)

    def log_likelihoods(decoded):
        decoded = np.array(decoded, "int32")
        # (The last position's logits predict nothing here; decoding the
        # whole row keeps the shape reference_greedy's ops have.)
        logits = to_numpy(t5.decode(decoded, encoder_outputs, mask))[:, :-1]
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        return np.take_along_axis(log_probs, decoded[:, 1:, None],
                                  axis=-1).sum(axis=(1, 2))
    assert np.all(log_likelihoods(beam) >= log_likelihoods(greedy) - 1e-4)


def test_forced_decoder_prompts_of_different_lengths(t5):
    inputs = sources()
    prompts = [[START], [START, 7, 9], [START, 4]]
    out = t5.generate(inputs, max_new_tokens=5, decoder_prompts=prompts,
                      stop_token_ids=None)
    assert [o[:len(p)] for o, p in zip(out, prompts)] == prompts
    assert [len(o) for o in out] == [6, 8, 7]
    assert out == t5.generate(inputs, max_new_tokens=5, use_cache=False,
                              decoder_prompts=prompts, stop_token_ids=None)
    # Each row alone gives what it gave in the batch. (Decoded alone to
    # the batch's length, LENGTH, so the three share one program: greedy
    # is causal, the extra tokens only follow.)
    for source, prompt, expected in zip(inputs, prompts, out):
        alone = t5.generate(source, max_length=LENGTH, decoder_prompts=prompt,
                            stop_token_ids=None)
        assert len(alone) == LENGTH
        assert alone[:len(expected)] == expected


# ----------------------------------------------------------------------
# Outputs, stopping, compilation reuse
# ----------------------------------------------------------------------
def test_stop_tokens_dicts_and_strip_prompt(t5):
    inputs = sources()
    free = t5.generate(inputs, max_length=LENGTH, stop_token_ids=None)
    stop = free[1][4]
    stopped = t5.generate(inputs, max_length=LENGTH, stop_token_ids=[stop])
    for ids, full in zip(stopped, free):
        new = full[1:]
        cut = new.index(stop) + 1 if stop in new else len(new)
        assert ids == [START] + new[:cut]
    stripped = t5.generate(inputs, max_length=LENGTH, stop_token_ids=[stop],
                           strip_prompt=True)
    assert [[START] + s for s in stripped] == stopped
    width = max(len(s) for s in inputs)
    token_ids = np.zeros((3, width), "int32")
    padding_mask = np.zeros((3, width), "bool")
    for i, s in enumerate(inputs):
        token_ids[i, :len(s)], padding_mask[i, :len(s)] = s, True
    out = t5.generate({"token_ids": token_ids, "padding_mask": padding_mask},
                      max_length=LENGTH, stop_token_ids=None)
    assert [row[mask].tolist() for row, mask in
            zip(out["token_ids"], out["padding_mask"])] == free


def test_same_shapes_do_not_recompile():
    model = tiny_seq2seq("t5", seed=2)
    model.generate(sources((4, 9)), max_length=8, sampler="top_k", seed=0)
    function = next(f for key, f in model._kzoo_generate_functions.items()
                    if key[0][0] == "TopKSampler")
    traces = function.traces
    # Other inputs in the same power-of-two bucket (<= 16 tokens).
    model.generate(sources((12, 2), seed=1), max_length=8, sampler="top_k",
                   seed=1)
    assert function.traces == traces
    # jax/tf: the whole loop once; torch: a graph per forward pass
    # (encoder, prefill, step).
    assert traces == (3 if keras.backend.backend() == "torch" else 1)
    model.generate(sources((17, 2), seed=1), max_length=8, sampler="top_k",
                   seed=1)  # a longer encoder input is a new shape
    assert function.traces > traces


def test_bad_input(t5, model):
    with pytest.raises(ValueError, match="Input 1 is empty"):
        t5.generate([[5, 6], []], max_length=5)
    with pytest.raises(ValueError, match="Input 0 holds token id 61"):
        t5.generate([[5, VOCAB]], max_length=5)
    with pytest.raises(ValueError, match="Decoder prompt 0 holds token id"):
        t5.generate([[5]], max_length=5, decoder_prompts=[[VOCAB]])
    with pytest.raises(ValueError, match="2 decoder prompts for 3 inputs"):
        t5.generate(sources(), max_length=5, decoder_prompts=[[0], [0]])
    with pytest.raises(ValueError, match="no preprocessor"):
        t5.generate(["text"], max_length=5)
    with pytest.raises(ValueError, match="max_length or max_new_tokens"):
        t5.generate(sources())
    if not model.t5:  # learned positions: both tables are limited
        with pytest.raises(ValueError, match="encoder's position table"):
            model.generate([list(range(2, 60)) * 2], max_length=5)
        with pytest.raises(ValueError, match="position table"):
            model.generate([[5]], max_length=65)
