"""Loading a weights file with errors that say what does not match.

Keras's own loader, given a file saved from a different config, reports
"expected 1 variables, but received 0" per layer (or loads nothing and
warns). Comparing the file's tensor shapes with the model's first turns
that into one sentence: which shapes the file has that the model lacks,
and the reverse.
"""

from collections import Counter

# Set on variables that hold state a layer carries from call to call (a
# stateful LSTM's h and c), not learned weights: weights files neither hold
# nor expect them, so one file loads into a stateful or a stateless model.
_RUNTIME_STATE = "_kzoo_runtime_state"


def runtime_state(variable):
    """Mark `variable` as carried state, not a weight; returns it."""
    setattr(variable, _RUNTIME_STATE, True)
    return variable


def is_runtime_state(variable):
    return getattr(variable, _RUNTIME_STATE, False)


def persistent_weights(model):
    """`model.weights` without carried state: what a weights file holds."""
    return [w for w in model.weights if not is_runtime_state(w)]


def saved_shapes(path):
    """Shapes of every model tensor in a Keras `.weights.h5` file (the
    optimizer state a compiled model also writes is left out)."""
    import h5py

    shapes = []

    def visit(_, obj):
        if isinstance(obj, h5py.Dataset):
            shapes.append(tuple(int(d) for d in obj.shape))

    with h5py.File(path, "r") as f:
        for key, group in f.items():
            if key == "optimizer":
                continue
            if isinstance(group, h5py.Dataset):
                visit(key, group)
            else:
                group.visititems(visit)
    return shapes


def _describe(counter, limit=5):
    def size(shape):
        n = 1
        for d in shape:
            n *= d
        return n
    # Largest first: embedding tables and kernels say most about a config.
    ordered = sorted(counter.items(), key=lambda item: -size(item[0]))
    items = [f"{shape} x{count}" if count > 1 else f"{shape}"
             for shape, count in ordered]
    more = f" and {len(items) - limit} more" if len(items) > limit else ""
    return ", ".join(items[:limit]) + more


def load_weights_checked(model, path, error_cls=ValueError):
    """`model.load_weights(path)`, after checking the file fits the model.

    Raises `error_cls` (before touching the model) when the file cannot be
    read (corrupt or truncated) or holds tensors of other shapes or number
    than the model built from its config.
    """
    try:
        in_file = Counter(saved_shapes(path))
    except OSError as e:
        raise error_cls(
            f"{path} is not a readable Keras weights file (corrupt or "
            f"truncated?): {e}. Delete it and save or convert the weights "
            "again.") from None
    in_model = Counter(tuple(int(d) for d in w.shape)
                       for w in persistent_weights(model))
    if in_file != in_model:
        raise error_cls(
            f"The weights in {path} do not fit {type(model).__name__} as "
            f"configured ({sum(in_model.values())} tensors expected, "
            f"{sum(in_file.values())} in the file). Only in the file: "
            f"{_describe(in_file - in_model) or 'nothing'}; only in the "
            f"model: {_describe(in_model - in_file) or 'nothing'}. The "
            "config (config.json or your overrides) does not belong to "
            "these weights.")
    model.load_weights(path)
