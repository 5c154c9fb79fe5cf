"""Everything backend-specific about generation, in one place.

1. Compiling the generate loop (a function of tensors built from
   keras.ops, see `loop.py`):
     jax         `jax.jit`; the model's variables enter as arguments through
                 a `keras.StatelessScope`, so weights are not baked into the
                 program and a later `fit` is seen by the next call.
     tensorflow  `tf.function(jit_compile=True)` (XLA).
     torch       eager under `torch.no_grad()`: the loop runs in Python, one
                 cached forward per new token. See `TorchRunner` for why it
                 is not `torch.compile`d by default and what makes it fast.
   Each compiled function is traced once per input shape; calling it again
   with the same shapes reuses the program (`traces` counts traces).

2. Random numbers from an explicit seed, inside compiled code:
   `initial_rng(seed)` and `uniform(rng, shape) -> (noise, next_rng)`.
   Keras' own `keras.random` needs a stateful `SeedGenerator` (a variable)
   or a Python int; an explicit key threaded through the loop is simpler to
   compile and makes seeded sampling reproducible on every backend.
"""

import random as _python_random

import keras
import numpy as np


def backend():
    return keras.backend.backend()


# ----------------------------------------------------------------------
# Random numbers
# ----------------------------------------------------------------------
def initial_rng(seed=None):
    """A fresh random key; `seed=None` draws one at random."""
    if seed is None:
        seed = _python_random.randrange(2**31)
    seed = int(seed) % (2**31)
    name = backend()
    if name == "jax":
        import jax
        return jax.random.PRNGKey(seed)
    if name == "tensorflow":
        import tensorflow as tf
        return tf.constant([seed, 0], dtype=tf.int64)
    import torch
    return torch.tensor([seed, 0], dtype=torch.int64)


def uniform(rng, shape, like=None):
    """`(noise ~ U(0, 1) of `shape`, next rng)`; works inside compiled
    code. `like` (a tensor) gives the device on torch."""
    name = backend()
    if name == "jax":
        import jax
        rng, key = jax.random.split(rng)
        return jax.random.uniform(key, shape, dtype="float32"), rng
    if name == "tensorflow":
        import tensorflow as tf
        noise = tf.random.stateless_uniform(shape, seed=rng, dtype=tf.float32)
        return noise, rng + tf.constant([0, 1], dtype=tf.int64)
    import torch
    device = like.device if like is not None else "cpu"
    generator = torch.Generator(device=device)
    seed, step = (int(v) for v in rng.tolist())
    generator.manual_seed(seed * 1_000_003 + step)
    noise = torch.rand(tuple(int(s) for s in shape), generator=generator,
                       device=device, dtype=torch.float32)
    return noise, rng + torch.tensor([0, 1], dtype=torch.int64)


# ----------------------------------------------------------------------
# Compiling
# ----------------------------------------------------------------------
class CompiledFunction:
    """`fn(*tensors)` compiled for the current backend.

    Attributes:
        traces: how many times `fn`'s Python body ran to build a program
            (on torch, eager, it runs every call and `traces` stays 0).
    """

    def __init__(self, fn, model):
        self.fn = fn
        self.model = model
        self.traces = 0
        self._compiled = getattr(self, f"_compile_{backend()}")()

    def _counted(self, *args):
        self.traces += 1
        return self.fn(*args)

    # jax ------------------------------------------------------------
    def _compile_jax(self):
        import jax

        variables = list(self.model.variables)

        def stateless(values, *args):
            mapping = list(zip(variables, values))
            with keras.StatelessScope(state_mapping=mapping):
                return self._counted(*args)

        jitted = jax.jit(stateless)

        def run(*args):
            values = [v.value for v in variables]
            return jitted(values, *args)

        return run

    # tensorflow -------------------------------------------------------
    def _compile_tensorflow(self):
        import tensorflow as tf

        function = tf.function(self._counted, jit_compile=True,
                               reduce_retracing=False)

        def run(*args):
            args = [tf.convert_to_tensor(a) for a in args]
            return function(*args)

        return run

    # torch ------------------------------------------------------------
    def _compile_torch(self):
        import torch

        def run(*args):
            args = [keras.ops.convert_to_tensor(a) if not isinstance(
                a, torch.Tensor) else a for a in args]
            with torch.no_grad():
                return self.fn(*args)

        return run

    def __call__(self, *args):
        outputs = self._compiled(*args)
        return keras.tree.map_structure(
            lambda x: np.asarray(keras.ops.convert_to_numpy(x)), outputs)
