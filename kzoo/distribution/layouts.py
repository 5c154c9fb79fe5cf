"""Model-parallel layouts: variable-path rules -> `keras.distribution.LayoutMap`.

A family declares *what* each weight is (its role) with a few regular
expressions over variable paths; this module decides *how* a role is split
over a device mesh. The split is Megatron-style tensor parallelism on the
model axis:

    role            kernel shape   split              why
    --------------  -------------  -----------------  ---------------------------
    "embedding"     (vocab, hid)   (None, model)      hidden columns; see below
    "column"        (in, out)      (None, model)      q/k/v and FFN-in: each
                                                      device owns whole output
                                                      columns (heads, FFN units)
    "column_bias"   (out,)         (model,)           follows its column kernel
    "row"           (in, out)      (model, None)      attention-out and FFN-out:
                                                      each device reduces its
                                                      own input rows; XLA adds
                                                      one all-reduce per block

Embeddings are split along the hidden dimension rather than the vocabulary
(Megatron's choice) because real vocabularies (30522 for BERT, 50257 for
GPT-2) do not divide evenly by mesh sizes, while hidden sizes always do:
they are multiples of the head count. Everything without a rule (LayerNorm,
biases of row-split kernels, position tables, task heads) is replicated.
Weights are replicated across the data axis; the batch is split over it by
`keras.distribution.ModelParallel(batch_dim_name=...)`.

A new family adds one classmethod to its backbone:

    @classmethod
    def layout_rules(cls):
        return {**transformer_rules(),
                r".*my_extra_proj/kernel": "column"}
"""

import re

import keras

EMBEDDING = "embedding"
COLUMN = "column"
COLUMN_BIAS = "column_bias"
ROW = "row"
REPLICATED = "replicated"

ROLES = (EMBEDDING, COLUMN, COLUMN_BIAS, ROW, REPLICATED)


def role_axes(role, model_axis):
    """The `TensorLayout` axes of a weight with `role`."""
    axes = {
        EMBEDDING: (None, model_axis),
        COLUMN: (None, model_axis),
        COLUMN_BIAS: (model_axis,),
        ROW: (model_axis, None),
        REPLICATED: None,
    }
    if role not in axes:
        raise ValueError(
            f"Unknown layout role {role!r}; use one of {ROLES}.")
    return axes[role]


def transformer_rules():
    """Rules for the weights of `kzoo.layers`: the token embedding and every
    `TransformerBlock` (with its `MultiHeadAttention`).

    Patterns are matched with `re.fullmatch` against `variable.path` (e.g.
    `transformer_layer_0/attention/query/kernel`); the leading `(.*/)?`
    lets them match inside a task too.

    Example:
    ```python
    import re
    from kzoo import distribution
    rules = distribution.transformer_rules()
    role = next(role for pattern, role in rules.items() if re.fullmatch(
        pattern, "transformer_layer_0/attention/query/kernel"))
    assert role == distribution.COLUMN   # split over the model axis by column
    ```
    """
    block = r"(.*/)?transformer_layer_\d+"
    return {
        r"(.*/)?token_embedding/embeddings": EMBEDDING,
        block + r"/attention/(query|key|value)/kernel": COLUMN,
        block + r"/attention/(query|key|value)/bias": COLUMN_BIAS,
        block + r"/attention/output/kernel": ROW,
        block + r"/intermediate_dense/kernel": COLUMN,
        block + r"/intermediate_dense/bias": COLUMN_BIAS,
        block + r"/output_dense/kernel": ROW,
    }


def layout_map_from_rules(rules, device_mesh, model_parallel_dim_name="model",
                          data_parallel_dim_name="batch"):
    """Turn `{path regex: role}` into a `LayoutMap` on `device_mesh`.

    Args:
        rules: a dict of variable-path regex -> role (see `ROLES`).
        device_mesh: a `keras.distribution.DeviceMesh`.
        model_parallel_dim_name: the mesh axis weights are split over.
        data_parallel_dim_name: the mesh axis the batch is split over (it
            must exist; weights are replicated along it).

    Example:
    ```python
    from kzoo import distribution
    mesh = keras.distribution.DeviceMesh(
        shape=(1, 1), axis_names=("batch", "model"), devices=["cpu:0"])
    layout_map = distribution.layout_map_from_rules(
        {r".*attention/query/kernel": distribution.COLUMN}, mesh)
    # A column-split kernel: its output axis over the "model" axis.
    layout = layout_map["transformer_layer_0/attention/query/kernel"]
    assert tuple(layout.axes) == (None, "model")
    ```
    """
    names = tuple(device_mesh.axis_names)
    for label, name in (("model_parallel_dim_name", model_parallel_dim_name),
                        ("data_parallel_dim_name", data_parallel_dim_name)):
        if name not in names:
            raise ValueError(
                f"{label}={name!r} is not an axis of the device mesh "
                f"{names}. Build the mesh with, e.g., keras.distribution."
                f"DeviceMesh(shape=(2, 4), axis_names=('batch', 'model')).")
    layout_map = keras.distribution.LayoutMap(device_mesh)
    for pattern, role in rules.items():
        axes = role_axes(role, model_parallel_dim_name)
        if axes is not None:
            layout_map[pattern] = axes
    return layout_map


def expected_axes(layout_map, path, ndim):
    """The axes `layout_map` gives the variable at `path` (replicated when
    no rule matches), as a tuple of length `ndim`."""
    layout = layout_map[path]
    if layout is None:
        return (None,) * ndim
    return tuple(layout.axes)


def unmatched_rules(layout_map, variables):
    """Rules of `layout_map` that match none of `variables`: a renamed layer
    would otherwise silently turn sharding off.

    Example:
    ```python
    from kzoo import distribution
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    rules = dict(distribution.transformer_rules(),
                 **{"no_such_layer/kernel": distribution.ROW})
    assert distribution.unmatched_rules(rules, backbone.weights) == [
        "no_such_layer/kernel"]   # a typo would silently turn sharding off
    ```
    """
    paths = [v.path for v in variables]
    return [pattern for pattern in layout_map
            if not any(re.fullmatch(pattern, path) for path in paths)]
