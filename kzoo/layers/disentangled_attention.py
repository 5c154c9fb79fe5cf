"""DeBERTa's disentangled self-attention (He et al., 2021), with v2/v3's
log-bucketed relative positions.

Each token is a content vector; each query-key pair also has a relative
position `i - j`, bucketed (exactly for `|i - j| < buckets / 2`, then
logarithmically up to `max_relative_positions`) and looked up in a table
of `2 * buckets` relative embeddings that every layer shares. The logits
add three terms (`pos_att_type` picks the last two):

    content-to-content  q_i . k_j
    content-to-position q_i . Kr[idx(i, j)]     (c2p)
    position-to-content k_j . Qr[idx(j, i)]     (p2c; note the transpose)

where `Kr`, `Qr` project the (LayerNormed) relative table with the key and
query projections (`share_att_key`, every v3 model) or their own. All
three are divided by `sqrt(head_dim * (1 + number of position terms))`.

The position terms are computed as the original computes them: one
matmul of the queries (keys) with the whole relative table,
`(batch, heads, seq, 2 * buckets)`, then a gather along its last axis by
the `(seq, seq)` bucket index. No loop over positions; the gather is
`take_along_axis`, which every backend compiles.
"""

import keras
from keras import ops

from kzoo.layers.dense import FoldedDense
from kzoo.layers.dropout import Dropout
from kzoo.layers.transformer_block import TransformerBlock

POSITION_TERMS = ("c2p", "p2c")


def log_bucket_position(relative_position, bucket_size, max_position):
    """`transformers`' `make_log_bucket_position`: relative positions
    (int tensor, any shape) -> bucketed ones, in
    `[-bucket_size + 1, bucket_size - 1]` for the released settings.

    Distances below `bucket_size // 2` keep their value; larger ones grow
    logarithmically, reaching `bucket_size // 2 + (mid - 1)` at
    `max_position - 1`, with the sign of the original. float32
    throughout, as the original, so boundaries round the same way.
    """
    relative = ops.cast(relative_position, "int32")
    mid = bucket_size // 2
    sign = ops.sign(relative)
    near = ops.logical_and(ops.less(relative, mid),
                           ops.greater(relative, -mid))
    abs_position = ops.where(near, mid - 1, ops.abs(relative))
    ratio = ops.cast(abs_position, "float32") / float(mid)
    denominator = ops.log(ops.convert_to_tensor((max_position - 1) / mid,
                                                dtype="float32"))
    log_position = ops.ceil(ops.log(ratio) / denominator
                            * float(mid - 1)) + float(mid)
    bucketed = ops.where(ops.less_equal(abs_position, mid),
                         ops.cast(relative, "float32"),
                         log_position * ops.cast(sign, "float32"))
    return ops.cast(bucketed, "int32")


def relative_position_index(query_length, key_length, bucket_size,
                            max_position):
    """`(query_length, key_length)` int32: `i - j`, log-bucketed when both
    `bucket_size` and `max_position` are positive (the original's
    `build_relative_position`)."""
    queries = ops.arange(query_length, dtype="int32")
    keys = ops.arange(key_length, dtype="int32")
    relative = ops.expand_dims(queries, 1) - ops.expand_dims(keys, 0)
    if bucket_size > 0 and max_position > 0:
        relative = log_bucket_position(relative, bucket_size, max_position)
    return relative


class RelativeEmbedding(keras.layers.Layer):
    """The table of relative position embeddings the layers share,
    `(2 * num_positions, hidden_dim)`, LayerNormed when `layer_norm`
    (DeBERTa's `norm_rel_ebd: layer_norm`).

    Call it on any tensor (only wires it into a functional model); it
    returns the (normalised) table.
    """

    def __init__(self, num_positions, hidden_dim, layer_norm=True,
                 layer_norm_epsilon=1e-7,
                 embeddings_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.num_positions = int(num_positions)
        self.hidden_dim = int(hidden_dim)
        self.layer_norm = bool(layer_norm)
        self.layer_norm_epsilon = float(layer_norm_epsilon)
        self.embeddings_initializer = keras.initializers.get(
            embeddings_initializer)

    def build(self, input_shape=None):
        self.embeddings = self.add_weight(
            name="embeddings",
            shape=(2 * self.num_positions, self.hidden_dim),
            initializer=self.embeddings_initializer)
        self.norm = None
        if self.layer_norm:
            self.norm = keras.layers.LayerNormalization(
                epsilon=self.layer_norm_epsilon, dtype=self.dtype_policy,
                name="layer_norm")
            self.norm.build((None, self.hidden_dim))
        self.built = True

    def call(self, inputs=None):
        table = ops.convert_to_tensor(self.embeddings)
        return table if self.norm is None else self.norm(table)

    def compute_output_spec(self, inputs=None):
        return keras.KerasTensor((2 * self.num_positions, self.hidden_dim),
                                 dtype=self.compute_dtype)

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_positions": self.num_positions,
            "hidden_dim": self.hidden_dim,
            "layer_norm": self.layer_norm,
            "layer_norm_epsilon": self.layer_norm_epsilon,
            "embeddings_initializer": keras.initializers.serialize(
                self.embeddings_initializer),
        })
        return config


class DisentangledSelfAttention(keras.layers.Layer):
    """DeBERTa-v2/v3 self-attention (see the module docstring).

    Args:
        num_heads, head_dim: attention heads and their width.
        position_buckets: DeBERTa's `position_buckets` (256); the relative
            table has `2 * position_buckets` rows. 0: no bucketing, the
            table has `2 * max_relative_positions` rows.
        max_relative_positions: the distance the log buckets reach (512).
        pos_att_type: the position terms, a subset of `("c2p", "p2c")`.
        share_att_key: project the relative table with the content query
            and key projections (v3); otherwise with their own
            (`pos_key`, for c2p, and `pos_query`, for p2c).
        dropout: dropout on the attention probabilities.
        position_dropout: dropout on the relative table (the original's
            `pos_dropout`, the hidden dropout rate).
        kernel_initializer: of every projection.

    Call arguments:
        hidden_states: `(batch, seq, hidden)`.
        relative_embeddings: `(2 * span, hidden)`, the shared table
            (`RelativeEmbedding`'s output).
        attention_mask: bool, broadcastable to `(batch, seq, seq)`.

    Returns `(batch, seq, hidden)`, after the output projection.
    """

    def __init__(self, num_heads, head_dim, position_buckets=256,
                 max_relative_positions=512, pos_att_type=POSITION_TERMS,
                 share_att_key=True, dropout=0.0, position_dropout=0.0,
                 kernel_initializer="glorot_uniform", **kwargs):
        super().__init__(**kwargs)
        self.num_heads = int(num_heads)
        self.head_dim = int(head_dim)
        self.position_buckets = int(position_buckets)
        self.max_relative_positions = int(max_relative_positions)
        unknown = [t for t in pos_att_type if t not in POSITION_TERMS]
        if unknown:
            raise ValueError(
                f"DisentangledSelfAttention: pos_att_type must be a subset "
                f"of {POSITION_TERMS}; got {list(pos_att_type)}.")
        self.pos_att_type = tuple(t for t in POSITION_TERMS
                                  if t in pos_att_type)
        self.share_att_key = bool(share_att_key)
        self.dropout = float(dropout)
        self.position_dropout = float(position_dropout)
        self.kernel_initializer = keras.initializers.get(kernel_initializer)

    @property
    def attention_span(self):
        """Rows of the relative table / 2 (the original's `att_span`)."""
        return (self.position_buckets if self.position_buckets > 0
                else self.max_relative_positions)

    @property
    def scale_factor(self):
        return 1 + len(self.pos_att_type)

    def build(self, input_shape):
        width = self.num_heads * self.head_dim

        def dense(name, units, shape):
            layer = FoldedDense(
                units, kernel_initializer=self.kernel_initializer,
                dtype=self.dtype_policy, name=name)
            layer.build(shape)
            return layer

        self.query_dense = dense("query", width, input_shape)
        self.key_dense = dense("key", width, input_shape)
        self.value_dense = dense("value", width, input_shape)
        self.pos_key_dense = self.pos_query_dense = None
        if not self.share_att_key:
            if "c2p" in self.pos_att_type:
                self.pos_key_dense = dense("pos_key", width, input_shape)
            if "p2c" in self.pos_att_type:
                self.pos_query_dense = dense("pos_query", width, input_shape)
        self.output_dense = dense("output", input_shape[-1],
                                  tuple(input_shape[:-1]) + (width,))
        self.dropout_layer = Dropout(
            self.dropout, dtype=self.dtype_policy)
        self.position_dropout_layer = Dropout(
            self.position_dropout, dtype=self.dtype_policy)
        self.built = True

    def _split_heads(self, x):
        # (..., seq, heads * head_dim) -> (..., seq, heads, head_dim)
        shape = ops.shape(x)
        return ops.reshape(x, tuple(shape[:-1]) + (self.num_heads,
                                                   self.head_dim))

    def position_scores(self, query, key, relative_embeddings, training=None):
        """The c2p + p2c logits, `(batch, heads, seq, seq)` float32, already
        divided by the scale; None when `pos_att_type` is empty."""
        if not self.pos_att_type:
            return None
        span = self.attention_span
        table = self.position_dropout_layer(
            relative_embeddings[:2 * span], training=training)
        seq_q, seq_k = ops.shape(query)[1], ops.shape(key)[1]
        index = relative_position_index(seq_q, seq_k, self.position_buckets,
                                        self.max_relative_positions)
        scale = ops.sqrt(float(self.head_dim * self.scale_factor))
        batch, heads = ops.shape(query)[0], self.num_heads
        scores = 0.0
        if "c2p" in self.pos_att_type:
            project = (self.key_dense if self.share_att_key
                       else self.pos_key_dense)
            pos_key = self._split_heads(project(table))  # (2span, h, d)
            # Every query against every relative row: (b, h, q, 2span).
            c2p = ops.einsum("bqhd,rhd->bhqr", query, pos_key)
            c2p_index = ops.clip(index + span, 0, 2 * span - 1)  # (q, k)
            c2p_index = ops.broadcast_to(c2p_index[None, None],
                                         (batch, heads, seq_q, seq_k))
            c2p = ops.take_along_axis(c2p, c2p_index, axis=-1)
            scores = scores + ops.cast(c2p, "float32") / scale
        if "p2c" in self.pos_att_type:
            project = (self.query_dense if self.share_att_key
                       else self.pos_query_dense)
            pos_query = self._split_heads(project(table))  # (2span, h, d)
            # Every key against every relative row: (b, h, k, 2span).
            p2c = ops.einsum("bkhd,rhd->bhkr", key, pos_query)
            # Key j's row gathered at idx(j, i) for query i, then (q, k).
            p2c_index = ops.clip(-index + span, 0, 2 * span - 1)
            p2c_index = ops.broadcast_to(p2c_index[None, None],
                                         (batch, heads, seq_k, seq_q))
            p2c = ops.take_along_axis(p2c, p2c_index, axis=-1)
            p2c = ops.transpose(p2c, (0, 1, 3, 2))
            scores = scores + ops.cast(p2c, "float32") / scale
        return scores

    def call(self, hidden_states, relative_embeddings, attention_mask=None,
             training=None):
        query = self._split_heads(self.query_dense(hidden_states))
        key = self._split_heads(self.key_dense(hidden_states))
        value = self._split_heads(self.value_dense(hidden_states))
        scale = ops.sqrt(float(self.head_dim * self.scale_factor))
        # Softmax in float32 (mixed precision: -1e9 is -inf in float16).
        scores = ops.cast(ops.einsum("bqhd,bkhd->bhqk", query, key),
                          "float32") / scale
        position = self.position_scores(query, key, relative_embeddings,
                                        training)
        if position is not None:
            scores = scores + position
        if attention_mask is not None:
            mask = ops.expand_dims(ops.cast(attention_mask, "bool"), 1)
            # A query with no key to attend to (padding) gets uniform
            # weights, as the original's fill with the dtype's minimum.
            scores = ops.where(mask, scores, -1e9)
        if scores.shape[-1] == 1:
            # One key: probability 1, without Keras' warning about a
            # softmax over one element.
            probs = ops.ones_like(scores, dtype=query.dtype)
        else:
            probs = ops.cast(ops.softmax(scores, axis=-1), query.dtype)
        probs = self.dropout_layer(probs, training=training)
        attended = ops.einsum("bhqk,bkhd->bqhd", probs, value)
        shape = ops.shape(attended)
        attended = ops.reshape(
            attended, (shape[0], shape[1], self.num_heads * self.head_dim))
        return self.output_dense(attended)

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "num_heads": self.num_heads,
            "head_dim": self.head_dim,
            "position_buckets": self.position_buckets,
            "max_relative_positions": self.max_relative_positions,
            "pos_att_type": list(self.pos_att_type),
            "share_att_key": self.share_att_key,
            "dropout": self.dropout,
            "position_dropout": self.position_dropout,
            "kernel_initializer": keras.initializers.serialize(
                self.kernel_initializer),
        })
        return config


class DisentangledEncoderBlock(TransformerBlock):
    """DeBERTa's post-LN encoder block: `TransformerBlock`'s residuals,
    norms and feed-forward around a `DisentangledSelfAttention`.

    Args: `TransformerBlock`'s (post-LN), and `position_buckets`,
    `max_relative_positions`, `pos_att_type`, `share_att_key` as
    `DisentangledSelfAttention` takes them; the relative table's dropout
    is the block's `dropout`, as the original's.

    Call arguments: `x (batch, seq, hidden)`, `relative_embeddings`,
    `attention_mask`.
    """

    def __init__(self, num_heads, intermediate_dim, position_buckets=256,
                 max_relative_positions=512, pos_att_type=POSITION_TERMS,
                 share_att_key=True, **kwargs):
        super().__init__(num_heads, intermediate_dim, **kwargs)
        self.position_buckets = int(position_buckets)
        self.max_relative_positions = int(max_relative_positions)
        self.pos_att_type = tuple(pos_att_type)
        self.share_att_key = bool(share_att_key)

    def _attention_layer(self, name, input_shape):
        layer = DisentangledSelfAttention(
            self.num_heads, self._head_dim(input_shape[-1]),
            position_buckets=self.position_buckets,
            max_relative_positions=self.max_relative_positions,
            pos_att_type=self.pos_att_type, share_att_key=self.share_att_key,
            dropout=self.attention_dropout, position_dropout=self.dropout,
            kernel_initializer=self.kernel_initializer,
            dtype=self.dtype_policy, name=name)
        layer.build(input_shape)
        return layer

    def call(self, x, relative_embeddings, attention_mask=None,
             training=None):
        attended = self.attention(x, relative_embeddings,
                                  attention_mask=attention_mask,
                                  training=training)
        x = self._residual(x, attended, self.attention_layer_norm, training)
        return self._feed_forward_sublayer(x, training)

    def compute_output_shape(self, input_shape, *args, **kwargs):
        return input_shape

    def get_config(self):
        config = super().get_config()
        config.update({
            "position_buckets": self.position_buckets,
            "max_relative_positions": self.max_relative_positions,
            "pos_att_type": list(self.pos_att_type),
            "share_att_key": self.share_att_key,
        })
        return config
