"""Post-training quantization of a backbone or task, through Keras.

Keras quantizes `Dense` and `EinsumDense` kernels (`"int8"`: per output
channel absmax weights and per-token absmax inputs; `"float8"`: scaled
e4m3 weights and inputs with delayed scaling). kzoo's projections are
`FoldedDense` (a `Dense`; `kzoo.layers.dense`), so every attention,
feed-forward, pooler and head projection is quantized, ALBERT's shared
block and DeBERTa's relative attention included. Embedding tables stay
float: tied LM heads read them whole, and the position and segment
tables are small. ELMo's and AWD-LSTM's LSTMs stay float too (Keras has
no quantized LSTM).

A quantized model saves its int8 kernels and scales. Its config records
which layers are quantized (`quantized_layers`, layer path -> Keras dtype
policy): loading builds the float model, quantizes those layers again
(the same structure: kernel, bias, scale) and then fills them from the
file.
"""

import contextlib
import gc
import re

import keras

from kzoo.utils.layer_tree import leaf_layers_with_weights

MODES = ("int8", "float8")
CONFIG_KEY = "quantized_layers"


def quantizable(layer):
    return isinstance(layer, (keras.layers.Dense, keras.layers.EinsumDense))


def quantized_layers(model, skip=()):
    """`{layer path: dtype policy name}` of the quantized layers in
    `model` (those of the models in `skip` left out)."""
    skipped = {id(layer) for part in skip
               for layer in leaf_layers_with_weights(part)}
    return {layer.path: layer.dtype_policy.name
            for layer in leaf_layers_with_weights(model)
            if id(layer) not in skipped and layer.quantization_mode}


def quantize(model, mode, config=None, filters=None):
    """`model.quantize(mode)`, checked: see `Backbone.quantize`."""
    owner = f"{type(model).__name__}.quantize"
    if mode not in MODES:
        raise ValueError(
            f"{owner}: mode must be one of {list(MODES)}; got {mode!r}. "
            "(GPTQ and AWQ need a calibration structure kzoo does not "
            "declare; int4 is untested here.)")
    done = quantized_layers(model)
    if done:
        modes = sorted({keras.dtype_policies.get(p).quantization_mode
                        for p in done.values()})
        raise ValueError(
            f"{owner}: the model is already quantized ({', '.join(modes)}, "
            f"{len(done)} layers). Quantize a float model once: reload it "
            "(from_preset) to quantize it another way.")
    def chosen(layer):
        if not quantizable(layer):
            return False
        if filters is None:
            return True
        if callable(filters):
            return filters(layer)
        patterns = [filters] if isinstance(filters, str) else filters
        return any(re.search(p, layer.path) for p in patterns)

    if not any(chosen(layer) for layer in leaf_layers_with_weights(model)):
        raise ValueError(
            f"{owner}: {type(model).__name__} has no Dense projection to "
            "quantize" + (" that the filters select" if filters else "") +
            " (Keras quantizes Dense and EinsumDense kernels; LSTMs and "
            "embedding tables stay float).")
    with _collections_once():
        keras.Model.quantize(model, mode, config=config, filters=chosen)


def apply_saved_quantization(model, saved):
    """Quantize the layers a saved config names (`quantized_layers`), so
    that the file's quantized weights load into the same structure."""
    if not saved:
        return
    layers = {layer.path: layer for layer in leaf_layers_with_weights(model)}
    missing = sorted(set(saved) - set(layers))
    if missing:
        raise ValueError(
            f"{type(model).__name__}: the saved config quantizes layers "
            f"this model does not have ({missing[:5]}); it was saved from "
            "another architecture.")
    by_mode = {}
    for path, policy in saved.items():
        mode = keras.dtype_policies.get(policy).quantization_mode
        by_mode.setdefault(mode, set()).add(path)
    # Through Model.quantize, which also re-tracks torch's parameters.
    with _collections_once():
        for mode, paths in by_mode.items():
            keras.Model.quantize(model, mode,
                                 filters=lambda layer: layer.path in paths)


@contextlib.contextmanager
def _collections_once():
    """Keras runs a full `gc.collect()` after deleting each float kernel
    it replaces (`Layer.__delattr__`, to free device memory at once): ~3 s
    per layer with TensorFlow, torch and jax loaded on a busy 2-core
    machine (a tiny BERT's 7 layers: 22 s). The kernels are freed by
    reference counting as they are deleted (checked on the three backends:
    a weak reference to the old variable and to its value is dead before
    any collection), so the collections only walk the heap: frozen, they
    find it empty (the same BERT: 0.1-1.6 s)."""
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
