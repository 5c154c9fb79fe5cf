"""Everything backend-specific about generation, in one place.

1. Compiling the generate loop (a function of tensors built from
   keras.ops, see `loop.py`):
     jax         `jax.jit`; the model's variables enter as arguments through
                 a `keras.StatelessScope`, so weights are not baked into the
                 program and a later `fit` is seen by the next call.
     tensorflow  `tf.function(jit_compile=True)` (XLA).
     torch       the loop runs in Python under `torch.no_grad()`, and each
                 forward pass it makes (one per new token) replays a
                 TorchScript graph recorded once per shape; see
                 `TorchTracedDecoder` for why, and why not torch.compile.
   Calling generate again with the same shapes reuses the programs
   (`CompiledFunction.traces` counts how many were built).

2. Random numbers from an explicit seed, inside compiled code:
   `initial_rng(seed)` and `uniform(rng, shape) -> (noise, next_rng)`.
   Keras' own `keras.random` needs a stateful `SeedGenerator` (a variable)
   or a Python int; an explicit key threaded through the loop is simpler to
   compile and makes seeded sampling reproducible on every backend. (Each
   backend has its own generator: a seed repeats its tokens on one
   backend, not across backends.)
"""

import random as _python_random

import keras
import numpy as np

from kzoo.layers import kv_cache


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
    """A generate loop compiled for the current backend.

    Args:
        build: `build(decoder) -> fn(*tensors)`, the loop (see `loop.py`)
            for a decoder (the model, or a stand-in with the same methods).
        model: the causal LM (or encoder-decoder model).

    Attributes:
        traces: how many programs were built: jax/tensorflow trace the
            whole loop once per input shape; torch traces each forward pass
            (cached step, prefill, uncached logits, and the encoder of an
            encoder-decoder) once per shape.
    """

    def __init__(self, build, model):
        self.model = model
        self.traces = 0
        name = backend()
        if name == "torch":
            self.decoder = TorchTracedDecoder(model, self)
            self.fn = build(self.decoder)
        else:
            self.fn = build(model)
        self._compiled = getattr(self, f"_compile_{name}")()

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
            args = [a if isinstance(a, torch.Tensor)
                    else keras.ops.convert_to_tensor(a) for a in args]
            with torch.no_grad():
                self.decoder.refresh_weights()
                return self.fn(*args)

        return run

    def __call__(self, *args):
        outputs = self._compiled(*args)
        return keras.tree.map_structure(
            lambda x: np.asarray(keras.ops.convert_to_numpy(x)), outputs)


class TorchTracedDecoder:
    """The model's forward passes as TorchScript graphs (torch only).

    PyTorch runs the generate loop eagerly, and eager Keras pays Python
    overhead on every layer call (about a hundred per GPT-2 step). So each
    forward pass the loop needs is recorded once per input shape with
    `torch.jit.trace` and replayed as a graph: the loop's Python work per
    token is then one graph call plus the sampler's few ops.

    The model's variables are inputs of the graphs (through a
    `keras.StatelessScope`), never baked-in constants, so the next call
    sees weight updates; the decoding position is a tensor input, and the
    shapes that the trace does bake in are the cache key.

    `torch.compile` was measured here instead: minutes to compile on CPU
    (dynamo traces through Keras' layer machinery) and no faster per step
    than eager Keras; tracing takes well under a second.
    """

    def __init__(self, model, owner):
        self.model = model
        self.owner = owner  # counts traces
        self.variables = list(model.variables)
        self.values = None
        self._graphs = {}

    def refresh_weights(self):
        self.values = tuple(v.value.detach() for v in self.variables)

    def _run(self, name, method, tensors, key):
        import warnings

        import torch

        graph_key = (name,) + key
        if graph_key not in self._graphs:
            variables = self.variables

            def function(values, *args):
                mapping = list(zip(variables, values))
                with keras.StatelessScope(state_mapping=mapping):
                    return method(*args)

            # The graphs write their own caches in place (kv_cache.py):
            # each `generate` call makes its caches, and a step's input
            # cache is never read after the step.
            with warnings.catch_warnings(), kv_cache.writes_in_place():
                warnings.simplefilter("ignore", torch.jit.TracerWarning)
                self._graphs[graph_key] = torch.jit.trace(
                    function, (self.values,) + tuple(tensors),
                    check_trace=False, strict=False)
            self.owner.traces += 1
        return self._graphs[graph_key](self.values, *tensors)

    # The decoder protocol of loop.py, and the encoder-decoder protocol
    # of encoder_decoder.py (the same methods with `encoder_state` last,
    # plus generation_encode) ----------------------------------------
    def generation_encode(self, token_ids, padding_mask):
        def encode(token_ids, padding_mask):
            return tuple(self.model.generation_encode(token_ids,
                                                      padding_mask))
        key = (tuple(token_ids.shape),)
        return list(self._run("encode", encode, (token_ids, padding_mask),
                              key))

    def generation_cache(self, batch_size, max_length):
        return self.model.generation_cache(batch_size, max_length)

    def generation_prefill(self, token_ids, cache, encoder_state=None):
        extra, key = _encoder_state_args(encoder_state)

        def prefill(token_ids, cache, *extra):
            return tuple(self.model.generation_prefill(
                token_ids, list(cache), *map(list, extra)))
        key = (tuple(token_ids.shape),) + key
        return list(self._run("prefill", prefill,
                              (token_ids, tuple(cache)) + extra, key))

    def generation_step(self, token_ids, cache, index, encoder_state=None):
        import torch

        extra, key = _encoder_state_args(encoder_state)

        def step(token_ids, cache, index, *extra):
            logits, cache = self.model.generation_step(
                token_ids, list(cache), index, *map(list, extra))
            return logits, tuple(cache)
        index = torch.as_tensor(index, dtype=torch.int32)
        key = (tuple(token_ids.shape), tuple(cache[0].shape)) + key
        logits, cache = self._run("step", step,
                                  (token_ids, tuple(cache), index) + extra,
                                  key)
        return logits, list(cache)

    def generation_logits(self, token_ids, index, encoder_state=None):
        import torch

        extra, key = _encoder_state_args(encoder_state)

        def logits(token_ids, index, *extra):
            return self.model.generation_logits(token_ids, index,
                                                *map(list, extra))
        index = torch.as_tensor(index, dtype=torch.int32)
        return self._run("logits", logits, (token_ids, index) + extra,
                         (tuple(token_ids.shape),) + key)


def _encoder_state_args(encoder_state):
    """`(extra graph inputs, extra cache-key entries)`: nothing for a
    decoder-only model; the state as one tuple input, keyed by its shapes,
    for an encoder-decoder."""
    if encoder_state is None:
        return (), ()
    state = tuple(encoder_state)
    return (state,), (tuple(tuple(x.shape) for x in state),)
