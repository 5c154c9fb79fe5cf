"""TransformerBlock's new options and TransformerDecoderBlock against
transformers with copied weights: T5's encoder and decoder blocks (pre-LN
RMSNorm, no biases, no logit scaling, relative position bias; ReLU and
gated-GELU FFN) and BART's decoder layer (post-LN); the decoder block's
caches against its full pass."""

import keras
import numpy as np
import pytest

from hf_copy import (additive_mask, assert_close, copy_bart_attention,
                     copy_linear, copy_norm, copy_t5_attention,
                     copy_t5_feed_forward, randomize, to_torch,
                     quiet_transformers)
from kzoo.layers import (RelativePositionBias, TransformerBlock,
                         TransformerDecoderBlock, causal_mask)

# Parity with `transformers`' layers runs in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs, task for task, through these layers.
pytestmark = pytest.mark.once

HIDDEN, HEADS, HEAD_DIM, FFN = 16, 4, 5, 24
RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 6, HIDDEN)).astype("float32")
ENCODER_OUTPUTS = RNG.normal(size=(2, 9, HIDDEN)).astype("float32")
ENCODER_PADDING = np.ones((2, 9), bool)
ENCODER_PADDING[1, 5:] = False
CAUSAL = np.broadcast_to(np.tril(np.ones((6, 6), bool)), (2, 6, 6))
CROSS_MASK = np.broadcast_to(ENCODER_PADDING[:, None], (2, 6, 9))
T5_FFN = {"relu": dict(activation="relu", gated_feed_forward=False),
          "gated-gelu": dict(activation="gelu_new", gated_feed_forward=True)}


def t5_block_args(feed_forward_proj):
    return dict(num_heads=HEADS, intermediate_dim=FFN, head_dim=HEAD_DIM,
                dropout=0.0, attention_dropout=0.0, layer_norm_epsilon=1e-6,
                normalize_first=True, use_bias=False, attention_scale=1.0,
                normalization="rms_norm", **T5_FFN[feed_forward_proj])


def t5_block(is_decoder, feed_forward_proj, seed):
    transformers = quiet_transformers()
    from transformers.models.t5.modeling_t5 import T5Block
    config = transformers.T5Config(
        d_model=HIDDEN, d_kv=HEAD_DIM, num_heads=HEADS, d_ff=FFN,
        feed_forward_proj=feed_forward_proj, is_decoder=is_decoder,
        relative_attention_num_buckets=8, relative_attention_max_distance=16,
        dropout_rate=0.0, layer_norm_epsilon=1e-6)
    config._attn_implementation = "eager"
    return randomize(T5Block(config, has_relative_attention_bias=True,
                             layer_idx=0), seed=seed)


def position_bias_from(t5_self_attention, bidirectional):
    layer = RelativePositionBias(HEADS, num_buckets=8, max_distance=16,
                                 bidirectional=bidirectional)
    layer.build()
    layer.embeddings.assign(
        t5_self_attention.relative_attention_bias.weight.detach().numpy())
    return layer


@pytest.mark.parametrize("feed_forward_proj", ["relu", "gated-gelu"])
def test_t5_encoder_block(feed_forward_proj):
    t5 = t5_block(False, feed_forward_proj, seed=3)
    block = TransformerBlock(**t5_block_args(feed_forward_proj))
    block.build(X.shape)
    copy_t5_attention(block.attention, t5.layer[0].SelfAttention)
    copy_norm(block.attention_layer_norm, t5.layer[0].layer_norm)
    copy_t5_feed_forward(block, t5.layer[1])
    position_bias = position_bias_from(t5.layer[0].SelfAttention, True)
    mask = np.ones((2, 6, 6), bool)
    mask[1, :, 4:] = False
    expected = t5(to_torch(X), attention_mask=additive_mask(mask))[0]
    out = block(X, attention_mask=mask, attention_bias=position_bias(X))
    assert_close(out, expected)


def t5_decoder_pair(feed_forward_proj, seed=4):
    t5 = t5_block(True, feed_forward_proj, seed=seed)
    block = TransformerDecoderBlock(**t5_block_args(feed_forward_proj))
    block.build(X.shape)
    copy_t5_attention(block.attention, t5.layer[0].SelfAttention)
    copy_norm(block.attention_layer_norm, t5.layer[0].layer_norm)
    copy_t5_attention(block.cross_attention, t5.layer[1].EncDecAttention)
    copy_norm(block.cross_attention_layer_norm, t5.layer[1].layer_norm)
    copy_t5_feed_forward(block, t5.layer[2])
    return t5, block


@pytest.mark.parametrize("feed_forward_proj", ["relu", "gated-gelu"])
def test_t5_decoder_block(feed_forward_proj):
    t5, block = t5_decoder_pair(feed_forward_proj)
    position_bias = position_bias_from(t5.layer[0].SelfAttention, False)
    expected = t5(to_torch(X), attention_mask=additive_mask(CAUSAL),
                  encoder_hidden_states=to_torch(ENCODER_OUTPUTS),
                  encoder_attention_mask=additive_mask(CROSS_MASK))[0]
    out = block(X, attention_mask=CAUSAL, attention_bias=position_bias(X),
                encoder_outputs=ENCODER_OUTPUTS,
                encoder_attention_mask=CROSS_MASK)
    assert_close(out, expected)


def bart_pair():
    transformers = quiet_transformers()
    from transformers.models.bart.modeling_bart import BartDecoderLayer
    config = transformers.BartConfig(
        d_model=HIDDEN, decoder_attention_heads=HEADS, decoder_ffn_dim=FFN,
        activation_function="gelu", dropout=0.0, attention_dropout=0.0,
        activation_dropout=0.0)
    config._attn_implementation = "eager"
    bart = randomize(BartDecoderLayer(config, layer_idx=0), seed=5)
    block = TransformerDecoderBlock(
        HEADS, FFN, activation="gelu", dropout=0.0, attention_dropout=0.0,
        layer_norm_epsilon=1e-5, normalize_first=False)
    block.build(X.shape)
    copy_bart_attention(block.attention, bart.self_attn)
    copy_norm(block.attention_layer_norm, bart.self_attn_layer_norm)
    copy_bart_attention(block.cross_attention, bart.encoder_attn)
    copy_norm(block.cross_attention_layer_norm, bart.encoder_attn_layer_norm)
    copy_linear(block.intermediate_dense, bart.fc1)
    copy_linear(block.output_dense, bart.fc2)
    copy_norm(block.output_layer_norm, bart.final_layer_norm)
    return bart, block


def test_bart_decoder_layer():
    bart, block = bart_pair()
    expected = bart(to_torch(X), attention_mask=additive_mask(CAUSAL),
                    encoder_hidden_states=to_torch(ENCODER_OUTPUTS),
                    encoder_attention_mask=additive_mask(CROSS_MASK))
    out = block(X, attention_mask=CAUSAL, encoder_outputs=ENCODER_OUTPUTS,
                encoder_attention_mask=CROSS_MASK)
    assert_close(out, expected)


def cached_decode(block, position_bias, max_length=8, prefill=2):
    """The decoder block run as generation runs it: the cross-attention
    keys/values projected once, a prefill, then one position per step."""
    cross_cache = block.compute_cross_attention_cache(ENCODER_OUTPUTS)
    padding = ENCODER_PADDING[:, None]  # (batch, 1, src)
    cache = keras.ops.zeros((2, 2, max_length, HEADS, block.attention.head_dim))

    def run(start, stop, cache):
        x = X[:, start:stop]
        bias = None if position_bias is None else position_bias(
            x, key_length=max_length, start_index=start)
        return block(x, attention_mask=causal_mask(stop - start, max_length,
                                                   start),
                     attention_bias=bias, cross_attention_cache=cross_cache,
                     encoder_attention_mask=padding, cache=cache,
                     cache_index=start)
    out, cache = run(0, prefill, cache)
    outputs = [out]
    for index in range(prefill, X.shape[1]):
        out, cache = run(index, index + 1, cache)
        outputs.append(out)
    return keras.ops.concatenate(outputs, axis=1)


@pytest.mark.parametrize("style", ["t5", "bart"])
def test_decoder_block_caches_equal_full_pass(style):
    if style == "t5":
        block = TransformerDecoderBlock(**t5_block_args("gated-gelu"))
        position_bias = RelativePositionBias(HEADS, 8, 16,
                                             bidirectional=False)
    else:
        block = TransformerDecoderBlock(HEADS, FFN, dropout=0.0,
                                        attention_dropout=0.0)
        position_bias = None
    full = block(X, attention_mask=CAUSAL,
                 attention_bias=None if position_bias is None
                 else position_bias(X),
                 encoder_outputs=ENCODER_OUTPUTS,
                 encoder_attention_mask=CROSS_MASK)
    assert_close(cached_decode(block, position_bias),
                 keras.ops.convert_to_numpy(full))


def test_defaults_keep_the_bert_block_weights():
    # Existing checkpoints (BERT, GPT-2) load by these paths.
    block = TransformerBlock(4, 32, name="b")
    block.build((None, None, 16))
    assert [w.path for w in block.weights] == [
        f"b/attention/{name}/{kind}"
        for name in ("query", "key", "value", "output")
        for kind in ("kernel", "bias")] + [
        "b/attention_layer_norm/gamma", "b/attention_layer_norm/beta",
        "b/intermediate_dense/kernel", "b/intermediate_dense/bias",
        "b/output_dense/kernel", "b/output_dense/bias",
        "b/output_layer_norm/gamma", "b/output_layer_norm/beta"]


def test_config_round_trip_and_errors():
    block = TransformerDecoderBlock(**t5_block_args("gated-gelu"),
                                    activation_dropout=0.1, name="d")
    again = TransformerDecoderBlock.from_config(block.get_config())
    assert again.get_config() == block.get_config()
    block.build(X.shape)
    assert sorted(w.path for w in block.weights if "norm" in w.path) == [
        "d/attention_layer_norm/scale", "d/cross_attention_layer_norm/scale",
        "d/output_layer_norm/scale"]
    with pytest.raises(ValueError, match="exactly one of"):
        block(X)
    with pytest.raises(ValueError, match="Unknown normalization"):
        TransformerBlock(2, 8, normalization="batch_norm")
    with pytest.raises(ValueError, match="divisible by num_heads"):
        TransformerBlock(3, 8).build((1, 4, 16))
