"""LoRA on a backbone: which layers take it, and its weights on their own.

Keras does the work: `Dense.enable_lora(rank)` (and `EinsumDense`'s,
`Embedding`'s) adds `lora_kernel_a (in, rank)`, random, and
`lora_kernel_b (rank, out)`, zeros, and computes with
`kernel + (alpha / rank) * a @ b`, so a fresh adapter changes nothing.
This module picks the layers (keras-hub's signature and defaults: the
attention query and value projections), freezes everything else, and
writes and reads the adapters alone (`.lora.h5`: plain HDF5 datasets, no
code) keyed by each layer's path, which the backbone's config fixes.

Saving the whole model (`save_to_preset`, `.keras`, `save_weights`)
writes each kernel with its adapter folded in (Keras' `Dense` does so), and
the backbone's config names no adapter: what loads is a plain model giving
the same outputs.
"""

import json

import keras
import numpy as np

from kzoo.utils.files import atomic_write
from kzoo.utils.layer_tree import nested_layers

# keras-hub's default targets (`Backbone.default_lora_layer_names`): its
# attention projections are named `query_dense`/`value_dense` in some
# families and `query`/`value` in others; kzoo's
# (`kzoo.layers.MultiHeadAttention`, DeBERTa's disentangled attention)
# are `query` and `value` in every family.
DEFAULT_TARGETS = ("query_dense", "value_dense", "query", "value")
LORA_SUFFIX = ".lora.h5"
_FORMAT = "kzoo-lora-1"


def lora_capable_layers(model):
    """Layers with weights that Keras can give an adapter, by path."""
    return {layer.path: layer
            for layer in nested_layers(model)
            if layer.weights and hasattr(layer, "enable_lora")}


def lora_layers(model):
    """The layers whose adapters are on, by path."""
    return {path: layer for path, layer in lora_capable_layers(model).items()
            if getattr(layer, "lora_enabled", False)}


def adapter_weights(layer):
    """A LoRA layer's two adapter variables (a, b)."""
    if hasattr(layer, "lora_kernel_a"):
        return layer.lora_kernel_a, layer.lora_kernel_b
    return layer.lora_embeddings_a, layer.lora_embeddings_b  # Embedding


def enable_lora(backbone, rank, target_layer_names=None):
    """See `Backbone.enable_lora`."""
    owner = f"{type(backbone).__name__}.enable_lora"
    if isinstance(rank, bool) or not isinstance(rank, (int, np.integer)) \
            or rank < 1:
        raise ValueError(f"{owner}: rank must be a positive integer (the "
                         f"adapters' inner width, e.g. 4); got {rank!r}.")
    if isinstance(target_layer_names, str):
        raise ValueError(
            f"{owner}: target_layer_names is a list of layer names; got the "
            f"string {target_layer_names!r}. Use [{target_layer_names!r}].")
    if lora_layers(backbone):
        raise ValueError(
            f"{owner}: LoRA is already enabled (rank "
            f"{backbone._lora_rank}). Enable it once per model; "
            "merge_lora_weights() folds trained adapters into the kernels.")
    names = list(DEFAULT_TARGETS if target_layer_names is None
                 else target_layer_names)
    capable = lora_capable_layers(backbone)
    targets = {path: layer for path, layer in capable.items()
               if layer.name in names}
    if not targets:
        available = sorted({layer.name for layer in capable.values()})
        what = ("no attention query or value projection (LoRA's default "
                "targets, as keras-hub's)" if target_layer_names is None
                else f"no layer named {names} that takes LoRA")
        raise ValueError(
            f"{owner}: {type(backbone).__name__} has {what}. "
            f"Its layers that take LoRA are named {available}; pass some "
            "of them as target_layer_names=[...].")
    # keras-hub's recipe: freeze every layer, then give the targets their
    # adapters. Keras freezes a target's kernel itself; its bias is frozen
    # here too, so that the adapters alone train (as PEFT's default,
    # bias="none").
    # (`trainable = True` on a model sets it on every layer inside: first.)
    backbone.trainable = True
    for layer in nested_layers(backbone):
        layer.trainable = False
    for layer in targets.values():
        layer.trainable = True
        layer.enable_lora(int(rank))
        for variable in layer.trainable_weights:
            if all(variable is not w for w in adapter_weights(layer)):
                variable.trainable = False
    backbone._lora_rank = int(rank)
    # Keras rebuilds its step functions for the new variables.
    backbone.train_function = backbone.test_function = None
    backbone.predict_function = None


def merge_lora_weights(backbone):
    """See `Backbone.merge_lora_weights`."""
    layers = _layers_with_adapters(backbone, "merge_lora_weights")
    for layer in layers.values():
        # Keras' own fold: `save_own_variables` writes the kernel with the
        # adapter in it; `load_own_variables` on a LoRA layer takes that
        # kernel and sets both adapters to zero (it does so for any LoRA
        # layer it loads, public API both ways).
        store = {}
        layer.save_own_variables(store)
        layer.load_own_variables(store)
        # b at zero stops a's gradient; a fresh random a lets a second
        # round of LoRA training start as the first did.
        a, _ = adapter_weights(layer)
        a.assign(keras.initializers.HeUniform()(a.shape, a.dtype))


def save_lora_weights(backbone, path):
    """See `Backbone.save_lora_weights`."""
    import h5py

    owner = f"{type(backbone).__name__}.save_lora_weights"
    if not str(path).endswith(LORA_SUFFIX):
        raise ValueError(f"{owner}: the file name must end in "
                         f"{LORA_SUFFIX!r}; got {str(path)!r}.")
    layers = _layers_with_adapters(backbone, "save_lora_weights")
    header = {"format": _FORMAT, "class_name": type(backbone).__name__,
              "rank": backbone._lora_rank,
              "targets": sorted({layer.name for layer in layers.values()})}

    def write(tmp):
        with h5py.File(tmp, "w") as f:
            f.attrs["kzoo_lora"] = json.dumps(header)
            for path_, layer in layers.items():
                a, b = adapter_weights(layer)
                group = f.create_group(path_)
                group["a"] = keras.ops.convert_to_numpy(a)
                group["b"] = keras.ops.convert_to_numpy(b)

    atomic_write(path, write, suffix=LORA_SUFFIX)


def load_lora_weights(backbone, path):
    """See `Backbone.load_lora_weights`."""
    import h5py

    owner = f"{type(backbone).__name__}.load_lora_weights"
    with h5py.File(path, "r") as f:
        try:
            header = json.loads(f.attrs["kzoo_lora"])
        except KeyError:
            raise ValueError(
                f"{owner}: {path} is not a kzoo LoRA file (no kzoo_lora "
                "header); write one with save_lora_weights().") from None
        arrays = {}
        f.visititems(lambda name, obj: arrays.__setitem__(name, obj[()])
                     if isinstance(obj, h5py.Dataset) else None)
    if header.get("format") != _FORMAT:
        raise ValueError(f"{owner}: {path} has format "
                         f"{header.get('format')!r}; this kzoo reads "
                         f"{_FORMAT!r}.")
    if not lora_layers(backbone):
        enable_lora(backbone, header["rank"], header["targets"])
    elif backbone._lora_rank != header["rank"]:
        raise ValueError(
            f"{owner}: {path} holds rank-{header['rank']} adapters but this "
            f"backbone has LoRA of rank {backbone._lora_rank}. Load it into "
            f"a backbone without LoRA, or enable_lora(rank="
            f"{header['rank']}).")
    layers = lora_layers(backbone)
    saved = {name.rsplit("/", 1)[0] for name in arrays}
    if saved != set(layers):
        raise ValueError(
            f"{owner}: {path} has adapters for layers this "
            f"{type(backbone).__name__} lacks or the reverse (file only: "
            f"{sorted(saved - set(layers))[:5]}, model only: "
            f"{sorted(set(layers) - saved)[:5]}). Load it into the "
            f"{header['class_name']} (same config) it was saved from.")
    for path_, layer in layers.items():
        for variable, key in zip(adapter_weights(layer), ("a", "b")):
            value = arrays[f"{path_}/{key}"]
            if tuple(value.shape) != tuple(variable.shape):
                raise ValueError(
                    f"{owner}: {path_}/{key} is {tuple(value.shape)} in "
                    f"{path} but {tuple(variable.shape)} here: the file "
                    "was saved from a backbone of another size.")
    for path_, layer in layers.items():
        for variable, key in zip(adapter_weights(layer), ("a", "b")):
            variable.assign(arrays[f"{path_}/{key}"])


def _layers_with_adapters(backbone, method):
    layers = lora_layers(backbone)
    if not layers:
        raise ValueError(
            f"{type(backbone).__name__}.{method}: LoRA is not enabled on "
            "this backbone. Call backbone.enable_lora(rank) first.")
    return layers
