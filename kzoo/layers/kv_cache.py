"""Writing a decoding step's keys and values into the key/value cache.

`write` is `keras.ops.slice_update`: functional, so an eager backend
copies the whole `(batch, 2, max_length, heads, head_dim)` cache of every
layer at every step (on torch a clone: 13% of GPT-2 small's greedy
decoding time at batch 4, more than its attention). XLA (jax,
TensorFlow) turns the update into an in-place write on its own.

The torch generation graphs (`kzoo.generation.compiled.TorchTracedDecoder`)
own their caches (made inside each `generate` call and never handed to a
user), so they are traced inside `writes_in_place()`, which records an
in-place `index_copy_` into the cache instead of the copy.
"""

import contextlib
import contextvars

import keras
from keras import ops

_IN_PLACE = contextvars.ContextVar("kzoo_cache_writes_in_place",
                                   default=False)


@contextlib.contextmanager
def writes_in_place():
    """Within this block, on torch, `write` updates the cache tensor it is
    given instead of returning an updated copy (other backends: no
    change). Only for caches that nothing else reads afterwards."""
    token = _IN_PLACE.set(True)
    try:
        yield
    finally:
        _IN_PLACE.reset(token)


def write(cache, update, index):
    """`cache (batch, 2, max_length, heads, head_dim)` with `update
    (batch, 2, T, heads, head_dim)` at positions `index .. index + T - 1`
    (`index` an int or a scalar tensor)."""
    if not _IN_PLACE.get() or keras.backend.backend() != "torch":
        return ops.slice_update(cache, [0, 0, index, 0, 0], update)
    import torch
    positions = torch.arange(update.shape[2], device=cache.device) + \
        torch.as_tensor(index, device=cache.device).long()
    return cache.index_copy_(2, positions, update.to(cache.dtype))
