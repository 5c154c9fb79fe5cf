"""The layers every transformer family stacks the same way, built once.

A family's backbone sums its own embeddings (that is where the families
differ: BERT's segments, RoBERTa's positions after the padding index, a
factorised projection, ...), then hands the sum to these builders. The
layer names are the ones presets' weight files and the converters use, so
a family built from them loads the same files it did when it built them
itself.
"""

import keras
from keras import ops

from kzoo.layers.dropout import Dropout
from kzoo.layers.transformer_block import TransformerBlock


def transformer_stack(num_layers, num_heads, intermediate_dim,
                      name_prefix="", **block_kwargs):
    """`num_layers` `TransformerBlock`s named
    `{name_prefix}transformer_layer_{i}`; `block_kwargs` go to every block
    (activation, dropouts, epsilon, `normalize_first`,
    `kernel_initializer`, `dtype`, ...)."""
    return [TransformerBlock(num_heads, intermediate_dim,
                             name=f"{name_prefix}transformer_layer_{i}",
                             **block_kwargs)
            for i in range(num_layers)]


def padding_attention_mask(padding_mask):
    """`(batch, seq)` -> `(batch, 1, seq)` bool: every query may attend to
    every real token (an encoder's mask)."""
    return ops.expand_dims(ops.cast(padding_mask, "bool"), 1)


def post_ln_encoder(embeddings, padding_mask, *, num_layers, num_heads,
                    hidden_dim, intermediate_dim, dropout, attention_dropout,
                    activation, layer_norm_epsilon, kernel_initializer,
                    dtype=None, pooler=True, project_embeddings=False,
                    name_prefix=""):
    """BERT's encoder body on summed embeddings `(batch, seq, width)`:
    LayerNorm (`embeddings_layer_norm`) and dropout on the embeddings,
    post-LayerNorm blocks, and optionally the `pooler` (dense + tanh on
    the first token).

    `project_embeddings`: a dense layer (`embeddings_project`) from the
    embeddings' width to `hidden_dim` after their dropout (ELECTRA's
    factorised embeddings). `name_prefix` goes before every layer name (a
    second encoder in one model: ELECTRA's generator).

    Returns `(sequence_output, pooled_output)`; `pooled_output` is None
    without a pooler.
    """
    x = keras.layers.LayerNormalization(
        epsilon=layer_norm_epsilon, dtype=dtype,
        name=f"{name_prefix}embeddings_layer_norm")(embeddings)
    x = Dropout(dropout, dtype=dtype,
                name=f"{name_prefix}embeddings_dropout")(x)
    if project_embeddings:
        x = keras.layers.Dense(
            hidden_dim, kernel_initializer=kernel_initializer, dtype=dtype,
            name=f"{name_prefix}embeddings_project")(x)
    attention_mask = padding_attention_mask(padding_mask)
    for block in transformer_stack(
            num_layers, num_heads, intermediate_dim, name_prefix=name_prefix,
            activation=activation,
            dropout=dropout, attention_dropout=attention_dropout,
            layer_norm_epsilon=layer_norm_epsilon,
            kernel_initializer=kernel_initializer, dtype=dtype):
        x = block(x, attention_mask=attention_mask)
    if not pooler:
        return x, None
    pooled = keras.layers.Dense(
        hidden_dim, activation="tanh", kernel_initializer=kernel_initializer,
        dtype=dtype, name="pooler")(x[:, 0, :])  # (batch, hidden)
    return x, pooled
