"""Telling concrete arrays from symbolic ones, across backends."""

import keras
import numpy as np


def concrete_numpy(x):
    """`x` as a numpy array when its values exist now, else None.

    Inside `jax.jit`, `tf.function` or functional-model construction the
    values do not exist yet; checks on values are then left to the caller's
    eager entry points.
    """
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, (list, tuple)):
        try:
            return np.asarray(x)
        except (ValueError, TypeError):
            return None
    if isinstance(x, keras.KerasTensor):
        return None
    backend = keras.backend.backend()
    if backend == "jax":
        import jax
        if isinstance(x, jax.core.Tracer):
            return None
    elif backend == "tensorflow":
        import tensorflow as tf
        if tf.is_tensor(x) and not hasattr(x, "numpy"):
            return None
    elif backend == "torch":
        import torch
        if torch.compiler.is_compiling():
            return None
    try:
        return keras.ops.convert_to_numpy(x)
    except Exception:
        return None
