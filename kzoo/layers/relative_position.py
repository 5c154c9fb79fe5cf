"""T5's relative position bias (Raffel et al., 2020, section 2.1).

T5 has no position embeddings: each attention head adds a learned scalar to
its logits, looked up by the bucket of `key_position - query_position`.
Buckets are exact for small distances and logarithmic up to
`max_distance`; every farther distance shares the last bucket. Encoders
bucket both directions (`bidirectional=True`: half the buckets for keys
after the query); decoders, which never see later keys, use all buckets for
the past (`bidirectional=False`).

T5 keeps the bias table in its first layer only and hands the computed bias
to every layer. Here the model owns one `RelativePositionBias` per stack,
calls it once, and passes its output to every block (`attention_bias=`):
the same single computation, shared the same way.
"""

import math

import keras
from keras import ops


def relative_position_bucket(relative_position, bidirectional=True,
                             num_buckets=32, max_distance=128):
    """The bucket (int32, in `[0, num_buckets)`) of each relative position.

    Args:
        relative_position: int tensor of `key_position - query_position`,
            any shape.
        bidirectional: encoders; `False` (decoders) puts every later key
            (positive relative position) in bucket 0.
        num_buckets, max_distance: from the model's config
            (`relative_attention_num_buckets`, `..._max_distance`).

    Equals `transformers`' `T5Attention._relative_position_bucket`.
    """
    relative_position = ops.cast(relative_position, "int32")
    if bidirectional:
        num_buckets //= 2
        # Keys after the query use the upper half of the buckets.
        offset = ops.cast(ops.greater(relative_position, 0),
                          "int32") * num_buckets
        distance = ops.abs(relative_position)
    else:
        offset = 0
        distance = -ops.minimum(relative_position, 0)  # past keys only
    # Half of the buckets count distances exactly ...
    max_exact = num_buckets // 2
    is_small = ops.less(distance, max_exact)
    # ... the other half grow logarithmically up to max_distance. The
    # maximum keeps log() finite where this branch is not taken (distance
    # 0); float32 throughout, as T5, so boundary cases round the same way.
    far = ops.cast(ops.maximum(distance, max_exact), "float32")
    log_ratio = ops.log(far / max_exact) / math.log(max_distance / max_exact)
    large = max_exact + ops.cast(log_ratio * (num_buckets - max_exact),
                                 "int32")
    large = ops.minimum(large, num_buckets - 1)
    return offset + ops.where(is_small, distance, large)


class RelativePositionBias(keras.layers.Layer):
    """Per-head attention logit bias from bucketed relative positions.

    Args:
        num_heads: attention heads (one learned scalar per head and bucket).
        num_buckets: T5's `relative_attention_num_buckets` (32).
        max_distance: T5's `relative_attention_max_distance` (128).
        bidirectional: `True` for encoders, `False` for (causal) decoders.
        embeddings_initializer: of the `(num_buckets, num_heads)` table.

    Call arguments:
        query_states: `(batch, seq_q, ...)`; only its length is used (a
            tensor argument, so the layer wires into functional models).
        key_length: number of keys; defaults to `seq_q` (self-attention
            without a cache). With a cache: the cache length.
        start_index: absolute position of the first query (the decoding
            position with a cache); keys start at position 0.

    Returns `(1, num_heads, seq_q, key_length)`, to add to the attention
    logits (`MultiHeadAttention(..., attention_bias=...)`).
    """

    def __init__(self, num_heads, num_buckets=32, max_distance=128,
                 bidirectional=True, embeddings_initializer="glorot_uniform",
                 **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.num_buckets = int(num_buckets)
        self.max_distance = int(max_distance)
        self.bidirectional = bool(bidirectional)
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings", shape=(self.num_buckets, self.num_heads),
            initializer=self.embeddings_initializer)
        self.built = True

    def call(self, query_states, key_length=None, start_index=0):
        query_length = ops.shape(query_states)[1]
        if key_length is None:
            key_length = query_length
        queries = ops.arange(query_length, dtype="int32") + ops.cast(
            start_index, "int32")  # (seq_q,)
        keys = ops.arange(key_length, dtype="int32")  # (seq_k,)
        relative = ops.expand_dims(keys, 0) - ops.expand_dims(queries, 1)
        buckets = relative_position_bucket(
            relative, self.bidirectional, self.num_buckets,
            self.max_distance)  # (seq_q, seq_k)
        values = ops.take(self.embeddings, buckets, axis=0)  # (q, k, heads)
        return ops.expand_dims(ops.transpose(values, (2, 0, 1)), 0)

    def compute_output_spec(self, query_states, key_length=None,
                            start_index=0):
        query_length = query_states.shape[1]
        if key_length is None:
            key_length = query_length
        return keras.KerasTensor(
            (1, self.num_heads, query_length, key_length),
            dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "num_buckets": self.num_buckets,
            "max_distance": self.max_distance,
            "bidirectional": self.bidirectional,
            "embeddings_initializer": keras.initializers.serialize(
                self.embeddings_initializer),
        })
        return config
