"""The global random generators a checkpoint saves besides the variables.

Keras' layers draw dropout through their `SeedGenerator`s, whose states
are variables (saved with the model's). But on torch, a `SeedGenerator`
made without a seed (`keras.layers.Dropout(seed=None)`, kzoo's layers')
does not use its state: Keras' torch `dropout` then takes torch's
unseeded fast path, `torch.nn.functional.dropout`, which draws from
torch's global generator (keras/src/backend/torch/random.py, Keras
3.15.1). So torch's global generator states (CPU and every CUDA device)
are saved and restored, as are NumPy's and Python's global generators
(for any code that draws from them between steps).
"""

import random

import numpy as np


def global_states():
    """The global generators' states, as JSON-serialisable values."""
    import keras
    states = {"python": _jsonable(random.getstate()),
              "numpy": _jsonable(np.random.get_state(legacy=False))}
    if keras.backend.backend() == "torch":
        import torch
        states["torch"] = torch.get_rng_state().tolist()
        if torch.cuda.is_available() and torch.cuda.is_initialized():
            states["torch_cuda"] = [s.tolist() for s in
                                    torch.cuda.get_rng_state_all()]
    return states


def restore_global_states(states):
    if not states:
        return
    version, internal, gauss = states["python"]
    random.setstate((version, tuple(internal), gauss))
    numpy_state = dict(states["numpy"])
    np.random.set_state(numpy_state)
    if "torch" in states:
        import torch
        torch.set_rng_state(torch.tensor(states["torch"], dtype=torch.uint8))
        if "torch_cuda" in states and torch.cuda.is_available():
            torch.cuda.set_rng_state_all(
                [torch.tensor(s, dtype=torch.uint8)
                 for s in states["torch_cuda"]])


def _jsonable(value):
    if isinstance(value, (tuple, list)):
        return [_jsonable(v) for v in value]
    if isinstance(value, dict):
        return {k: _jsonable(v) for k, v in value.items()}
    if isinstance(value, np.ndarray):
        return value.tolist()
    if isinstance(value, np.integer):
        return int(value)
    return value
