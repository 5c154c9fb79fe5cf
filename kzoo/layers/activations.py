"""Activations by the names the original checkpoints use.

Hugging Face configs name activations `gelu` (exact, erf based), `gelu_new`
(GPT-2's tanh approximation), `relu`, ... . Keeping their names lets a
converted config carry over without a translation table.
"""

from keras import ops


def gelu_exact(x):
    return ops.gelu(x, approximate=False)


def gelu_tanh(x):
    return ops.gelu(x, approximate=True)


_ACTIVATIONS = {
    "gelu": gelu_exact,
    "gelu_exact": gelu_exact,
    "gelu_new": gelu_tanh,
    "gelu_pytorch_tanh": gelu_tanh,
    "gelu_tanh": gelu_tanh,
    "relu": ops.relu,
    "silu": ops.silu,
    "swish": ops.silu,
    "tanh": ops.tanh,
}


def get_activation(name):
    """Return the activation function called `name` (Hugging Face naming)."""
    try:
        return _ACTIVATIONS[name]
    except KeyError:
        raise ValueError(
            f"Unknown activation {name!r}. Known activations: "
            f"{sorted(_ACTIVATIONS)}."
        ) from None


def activation_names():
    return sorted(_ACTIVATIONS)

