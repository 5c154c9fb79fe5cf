"""SpanBERT's span boundary head, checked by hand: it reads the vectors of
the tokens left and right of each span and the offset's embedding, then
the 2-layer MLP (activation + LayerNorm each) and the tied embedding."""

import keras
import numpy as np

from helpers import assert_all_close
from kzoo.layers import SpanBoundaryHead, TokenEmbedding


def make_head(vocabulary=11, hidden=6, max_span_length=4, width=3):
    embedding = TokenEmbedding(vocabulary, hidden)
    embedding.build((None, None))
    head = SpanBoundaryHead(embedding, activation="gelu",
                            layer_norm_epsilon=1e-5,
                            max_span_length=max_span_length,
                            position_embedding_dim=width)
    head.build((None, None, hidden))
    # Non-trivial LayerNorm and bias values, so the check sees them.
    rng = np.random.default_rng(0)
    for weight in head.weights:
        weight.assign(rng.normal(size=weight.shape).astype("float32"))
    return head, embedding


def test_boundary_states_gather_the_right_vectors():
    head, _ = make_head()
    # Token t of row b holds the vector [100 b + t] * hidden: each vector
    # names its own position.
    batch, length, hidden = 2, 9, 6
    sequence = (100 * np.arange(batch)[:, None] + np.arange(length)[None])
    sequence = np.repeat(sequence[..., None], hidden, axis=-1).astype(
        "float32")
    left = np.array([[1, 1, 4], [0, 3, 0]])
    right = np.array([[4, 4, 8], [2, 6, 0]])
    relative = np.array([[0, 1, 0], [0, 2, 7]])  # 7: beyond the table
    states = keras.ops.convert_to_numpy(head.boundary_states(
        sequence, left, right, relative))
    assert states.shape == (2, 3, 2 * hidden + 3)
    np.testing.assert_array_equal(states[..., 0],
                                  100 * np.arange(2)[:, None] + left)
    np.testing.assert_array_equal(states[..., hidden],
                                  100 * np.arange(2)[:, None] + right)
    table = keras.ops.convert_to_numpy(head.position_embeddings)
    np.testing.assert_array_equal(states[..., 2 * hidden:],
                                  table[np.minimum(relative, 3)])


def test_head_is_spanbert_mlp_through_the_tied_embedding():
    head, embedding = make_head()
    rng = np.random.default_rng(1)
    sequence = rng.normal(size=(2, 9, 6)).astype("float32")
    left, right = np.array([[1, 3]] * 2), np.array([[4, 7]] * 2)
    relative = np.array([[0, 2]] * 2)
    logits = head(sequence, left, right, relative)
    assert tuple(logits.shape) == (2, 2, 11)

    def weight(layer, name):
        return keras.ops.convert_to_numpy(getattr(layer, name))

    def gelu(x):
        from math import erf, sqrt
        return 0.5 * x * (1 + np.vectorize(erf)(x / sqrt(2)))

    def layer_norm(x, layer):
        mean = x.mean(-1, keepdims=True)
        var = x.var(-1, keepdims=True)
        return (x - mean) / np.sqrt(var + 1e-5) * weight(layer, "gamma") + \
            weight(layer, "beta")

    rows = np.arange(2)[:, None]
    h0 = np.concatenate([sequence[rows, left], sequence[rows, right],
                         weight(head, "position_embeddings")[relative]], -1)
    h1 = layer_norm(gelu(h0 @ weight(head.dense_1, "kernel")
                         + weight(head.dense_1, "bias")), head.layer_norm_1)
    h2 = layer_norm(gelu(h1 @ weight(head.dense_2, "kernel")
                         + weight(head.dense_2, "bias")), head.layer_norm_2)
    expected = h2 @ weight(embedding, "embeddings").T + weight(head, "bias")
    assert_all_close(logits, expected, atol=1e-4)
    # The embedding is the backbone's: not among the head's own weights.
    assert all(w is not embedding.embeddings for w in head.weights)
