"""MultiHeadAttention: the default path against NumPy, T5's attention (no
biases, no scaling, relative position bias; self- and cross-attention) and
BART's cross-attention against transformers with copied weights, and the
caches (self-attention written per step; cross-attention projected once)."""

import keras
import numpy as np
import pytest

from hf_copy import (additive_mask, assert_close, copy_bart_attention,
                     copy_t5_attention, randomize, to_torch,
                     quiet_transformers)
from kzoo.layers import MultiHeadAttention, RelativePositionBias, causal_mask

# Parity with `transformers`' layers runs in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs, task for task, through these layers.
pytestmark = pytest.mark.once

RNG = np.random.default_rng(0)
X = RNG.normal(size=(2, 6, 16)).astype("float32")        # queries
CONTEXT = RNG.normal(size=(2, 9, 16)).astype("float32")  # encoder outputs
# Padding mask of the context: the second row has 4 padding positions.
CONTEXT_PADDING = np.ones((2, 9), bool)
CONTEXT_PADDING[1, 5:] = False


def attention_reference(x, context, layer, mask=None, bias=None, scale=None):
    """NumPy attention with the layer's weights."""
    def dense(d, v):
        w = [np.asarray(keras.ops.convert_to_numpy(t)) for t in d.weights]
        return v @ w[0] + (w[1] if len(w) > 1 else 0.0)
    heads, dim = layer.num_heads, layer.head_dim

    def split(v):
        return v.reshape(v.shape[0], v.shape[1], heads, dim)
    q = split(dense(layer.query_dense, x))
    k = split(dense(layer.key_dense, context))
    v = split(dense(layer.value_dense, context))
    scale = 1 / np.sqrt(dim) if scale is None else scale
    logits = np.einsum("bqhd,bkhd->bhqk", q, k) * scale
    if bias is not None:
        logits = logits + bias
    if mask is not None:
        logits = np.where(mask[:, None], logits, -1e9)
    probs = np.exp(logits - logits.max(-1, keepdims=True))
    probs /= probs.sum(-1, keepdims=True)
    out = np.einsum("bhqk,bkhd->bqhd", probs, v).reshape(x.shape[0],
                                                        x.shape[1], -1)
    return dense(layer.output_dense, out)


def built(layer, shape=X.shape):
    layer.build(shape)
    return layer


def test_default_path_matches_numpy():
    layer = built(MultiHeadAttention(4, 4))
    mask = np.asarray(keras.ops.convert_to_numpy(causal_mask(6, 6)))
    mask = np.broadcast_to(mask, (2, 6, 6))
    assert_close(layer(X, attention_mask=mask),
                 attention_reference(X, X, layer, mask=mask))


def test_no_bias_and_scale_options():
    layer = built(MultiHeadAttention(4, 5, use_bias=False, scale=1.0))
    assert all("bias" not in w.path for w in layer.weights)
    assert len(layer.weights) == 4
    assert_close(layer(X), attention_reference(X, X, layer, scale=1.0))
    # The bias path (explicit softmax) with a scale of its own.
    bias = RNG.normal(size=(1, 4, 6, 6)).astype("float32")
    assert_close(layer(X, attention_bias=bias),
                 attention_reference(X, X, layer, bias=bias, scale=1.0))
    config = MultiHeadAttention.from_config(layer.get_config()).get_config()
    assert (config["use_bias"], config["scale"]) == (False, 1.0)


def t5_config(is_decoder):
    transformers = quiet_transformers()
    config = transformers.T5Config(
        d_model=16, d_kv=5, num_heads=4, is_decoder=is_decoder,
        relative_attention_num_buckets=8, relative_attention_max_distance=16,
        dropout_rate=0.0)
    config._attn_implementation = "eager"
    return config


@pytest.mark.parametrize("is_decoder", [False, True])
def test_t5_self_attention_with_relative_bias(is_decoder):
    from transformers.models.t5.modeling_t5 import T5Attention
    t5 = randomize(T5Attention(t5_config(is_decoder),
                               has_relative_attention_bias=True,
                               layer_idx=0))
    layer = built(MultiHeadAttention(4, 5, use_bias=False, scale=1.0))
    copy_t5_attention(layer, t5)
    position_bias = built(RelativePositionBias(
        4, num_buckets=8, max_distance=16, bidirectional=not is_decoder), None)
    position_bias.embeddings.assign(
        t5.relative_attention_bias.weight.detach().numpy())
    if is_decoder:
        mask = np.broadcast_to(np.tril(np.ones((6, 6), bool)), (2, 6, 6))
    else:
        mask = np.ones((2, 6, 6), bool)
        mask[1, :, 4:] = False  # padding at the end of the second row
    expected, _, _ = t5(to_torch(X), mask=additive_mask(mask))
    out = layer(X, attention_mask=mask, attention_bias=position_bias(X))
    assert_close(out, expected)


def test_t5_cross_attention_and_its_cache():
    from transformers.models.t5.modeling_t5 import T5Attention
    t5 = randomize(T5Attention(t5_config(True), layer_idx=0), seed=1)
    layer = built(MultiHeadAttention(4, 5, use_bias=False, scale=1.0))
    copy_t5_attention(layer, t5)
    mask = np.broadcast_to(CONTEXT_PADDING[:, None], (2, 6, 9))
    expected, _, _ = t5(to_torch(X), key_value_states=to_torch(CONTEXT),
                        mask=additive_mask(mask))
    assert_close(layer(X, attention_mask=mask, context=CONTEXT), expected)
    # Projected once: (batch, 2, src, heads, head_dim), then reused.
    context_cache = layer.compute_context_cache(CONTEXT)
    assert tuple(context_cache.shape) == (2, 2, 9, 4, 5)
    padding = CONTEXT_PADDING[:, None]  # (batch, 1, src) broadcasts
    assert_close(layer(X, attention_mask=padding,
                       context_cache=context_cache), expected)
    # One query at a time (a decoding step) sees the same context.
    assert_close(layer(X[:, 2:3], attention_mask=padding,
                       context_cache=context_cache), expected[:, 2:3])


def test_bart_cross_attention():
    transformers = quiet_transformers()
    from transformers.models.bart.modeling_bart import BartAttention
    config = transformers.BartConfig(d_model=16, decoder_attention_heads=4)
    config._attn_implementation = "eager"
    bart = randomize(BartAttention(16, 4, is_decoder=True, config=config,
                                   layer_idx=0), seed=2)
    layer = built(MultiHeadAttention(4, 4))  # biases, 1/sqrt(head_dim)
    copy_bart_attention(layer, bart)
    mask = np.broadcast_to(CONTEXT_PADDING[:, None], (2, 6, 9))
    expected, _ = bart(to_torch(X), key_value_states=to_torch(CONTEXT),
                       attention_mask=additive_mask(mask))
    assert_close(layer(X, attention_mask=mask, context=CONTEXT), expected)
    assert_close(layer(X, attention_mask=mask,
                       context_cache=layer.compute_context_cache(CONTEXT)),
                 expected)


def test_self_attention_cache_with_bias_equals_full_pass():
    layer = built(MultiHeadAttention(4, 5, use_bias=False, scale=1.0))
    position_bias = built(RelativePositionBias(4, 8, 16, bidirectional=False),
                          None)
    full = layer(X, attention_mask=causal_mask(6, 6),
                 attention_bias=position_bias(X))
    max_length = 8  # longer than the sequence: stale slots stay masked
    cache = keras.ops.ones((2, 2, max_length, 4, 5)) * 7.0
    # A prefill of 2 positions, then one position per step.
    out, cache = layer(X[:, :2], attention_mask=causal_mask(2, max_length),
                       attention_bias=position_bias(X[:, :2],
                                                key_length=max_length),
                       cache=cache, cache_index=0)
    steps = [out]
    for index in range(2, 6):
        out, cache = layer(
            X[:, index:index + 1],
            attention_mask=causal_mask(1, max_length, index),
            attention_bias=position_bias(X[:, :1], key_length=max_length,
                                         start_index=index),
            cache=cache, cache_index=index)
        steps.append(out)
    assert_close(keras.ops.concatenate(steps, axis=1),
                 keras.ops.convert_to_numpy(full))


def test_cache_and_context_are_exclusive():
    layer = built(MultiHeadAttention(2, 8))
    with pytest.raises(ValueError, match="cross-attention takes"):
        layer(X, context=CONTEXT, cache=keras.ops.zeros((2, 2, 6, 2, 8)),
              cache_index=0)
