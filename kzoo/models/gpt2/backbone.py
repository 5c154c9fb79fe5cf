"""GPT-2 (Radford et al., 2019): a pre-LayerNorm transformer decoder."""

import keras
from keras import ops

from kzoo.distribution.layouts import transformer_rules
from kzoo.layers import (
    CausalPaddingMask,
    causal_mask,
    token_and_position_embeddings,
)
from kzoo.layers.dropout import Dropout
from kzoo.layers.encoder_stack import transformer_stack
from kzoo.core.backbone import Backbone
from kzoo.core.registry import register


def gpt2_kernel_initializer(stddev=0.02):
    # GPT-2 initialises every kernel and embedding from N(0, 0.02).
    return keras.initializers.RandomNormal(stddev=stddev)


@register
class GPT2Backbone(Backbone):
    """The GPT-2 decoder.

    token + learned position embeddings -> dropout -> `num_layers` pre-LN
    blocks with causal self-attention -> final LayerNorm. The output
    projection (in `GPT2CausalLM`) is tied to the token embedding.

    Inputs (a dict):
        token_ids: `(batch, seq)` int, ids in the byte-level BPE vocabulary.
        padding_mask: `(batch, seq)` bool/int, 1 for real tokens. Padding
            is expected on the right (positions count from 0 in each row).

    Output: `(batch, seq, hidden_dim)`, the final LayerNorm's output.

    Args:
        vocabulary_size: number of token ids (50,257 for GPT-2).
        num_layers, num_heads, hidden_dim, intermediate_dim: the shape.
        dropout: dropout on embeddings, attention output and FFN output
            (`embd_pdrop`, `resid_pdrop`).
        attention_dropout: dropout on attention probabilities (`attn_pdrop`).
        max_sequence_length: size of the position table (`n_positions`).
        activation: FFN activation; `"gelu_new"` (tanh approximation) as
            in the original.
        layer_norm_epsilon: 1e-5 in the original.
        initializer_range: stddev of the normal initialiser.

    Example:
    ```python
    # from_preset("gpt2") loads the released weights (downloaded once);
    # load_weights=False and config overrides give a small random one.
    backbone = kzoo.GPT2Backbone.from_preset(
        "gpt2", load_weights=False, num_layers=2)
    hidden = backbone({"token_ids": np.array([[15496, 995]]),
                       "padding_mask": np.ones((1, 2), "int32")})
    assert hidden.shape == (1, 2, 768)
    ```
    """

    input_names = ("token_ids", "padding_mask")
    family = "gpt2"

    def __init__(self, vocabulary_size, num_layers, num_heads, hidden_dim,
                 intermediate_dim, dropout=0.1, attention_dropout=0.1,
                 max_sequence_length=1024, activation="gelu_new",
                 layer_norm_epsilon=1e-5, initializer_range=0.02,
                 dtype=None, **kwargs):
        init = gpt2_kernel_initializer(initializer_range)

        # === Layers ===
        token_embedding, position_embedding = token_and_position_embeddings(
            vocabulary_size, max_sequence_length, hidden_dim, init, dtype)
        embeddings_dropout = Dropout(
            dropout, dtype=dtype, name="embeddings_dropout")
        blocks = transformer_stack(
            num_layers, num_heads, intermediate_dim, activation=activation,
            dropout=dropout, attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon, normalize_first=True,
            kernel_initializer=init, dtype=dtype)
        layer_norm = keras.layers.LayerNormalization(
            epsilon=layer_norm_epsilon, dtype=dtype, name="layer_norm")
        attention_mask_layer = CausalPaddingMask(
            dtype=dtype, name="attention_mask")

        # === Functional model ===
        token_ids = keras.Input((None,), dtype="int32", name="token_ids")
        padding_mask = keras.Input((None,), dtype="int32", name="padding_mask")

        tokens = token_embedding(token_ids)  # (batch, seq, hidden)
        x = embeddings_dropout(tokens + position_embedding(tokens))
        # (batch, seq, seq): causal, and no attention to padding.
        attention_mask = attention_mask_layer(padding_mask)
        for block in blocks:
            x = block(x, attention_mask=attention_mask)
        x = layer_norm(x)

        super().__init__(
            inputs={"token_ids": token_ids, "padding_mask": padding_mask},
            outputs=x, dtype=dtype, **kwargs)
        self.transformer_layers = blocks  # for call_with_cache

    @property
    def head_dim(self):
        return self.hidden_dim // self.num_heads

    # ------------------------------------------------------------------
    # Decoding with a key/value cache (used by kzoo.generation)
    # ------------------------------------------------------------------
    def init_cache(self, batch_size, max_length):
        """Zero key/value caches, one `(batch, 2, max_length, heads,
        head_dim)` tensor per layer."""
        shape = (batch_size, 2, max_length, self.num_heads, self.head_dim)
        dtype = self.dtype_policy.compute_dtype
        return [ops.zeros(shape, dtype=dtype) for _ in range(self.num_layers)]

    def call_with_cache(self, token_ids, cache, cache_index):
        """Run `token_ids (batch, T)`, which sit at positions
        `cache_index .. cache_index + T - 1`, attending to the cached keys
        and values before them.

        Returns `(hidden (batch, T, hidden_dim), updated cache)`. Keys in
        the cache at or after `cache_index + T` are masked out, so whatever
        they hold does not matter.
        """
        tokens = self.get_layer("token_embedding")(token_ids)
        x = tokens + self.get_layer("position_embedding")(
            tokens, start_index=cache_index)
        max_length = ops.shape(cache[0])[2]
        # (1, T, max_length)
        mask = causal_mask(ops.shape(token_ids)[1], max_length, cache_index)
        new_cache = []
        for block, layer_cache in zip(self.transformer_layers, cache):
            x, layer_cache = block(x, attention_mask=mask, cache=layer_cache,
                                   cache_index=cache_index, training=False)
            new_cache.append(layer_cache)
        return self.get_layer("layer_norm")(x), new_cache

    def kernel_initializer(self):
        return gpt2_kernel_initializer(self.initializer_range)

    @classmethod
    def layout_rules(cls):
        return transformer_rules()
