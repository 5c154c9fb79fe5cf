"""Tasks that leave Python: a TensorFlow SavedModel that takes raw text,
and ONNX graphs on token ids.

`Task.export(path)` calls `export_saved_model` here. The choices, and why:

- **Keras' `ExportArchive`, not our own `tf.Module`.** It already turns
  a Keras model into a TensorFlow function on each backend that can: as
  it is on TensorFlow, through `jax2tf` on JAX. We add one endpoint of
  our own on top (the raw-text one), as its documentation shows for
  "a model with some TensorFlow preprocessing".
- **The tokenizer and packing are the preprocessor's own tf ops.** kzoo's
  preprocessors run in `tf.data` on every backend, so the graph the
  SavedModel holds is the one `predict` runs: no second implementation
  of tokenizing to keep equal. keras-hub's tokenizers use tf-text's ops
  (`NormalizeUTF8`, `FastWordpieceTokenizeWithOffsets`,
  `SentencepieceTokenizeOp`, ...), so a process that loads the SavedModel
  must `import tensorflow_text` first (it registers those ops); it needs
  neither kzoo nor keras-hub.
- **Two endpoints.** `serve` (also `serving_default`, the one TensorFlow
  Serving calls) takes raw strings; `serve_token_ids` takes the model's
  input dict, for callers that tokenize elsewhere. Token ids are fixed at
  the preprocessor's `sequence_length`: the rows it packs are that long,
  and a fixed length keeps `jax2tf` from tracing a symbolic sequence axis
  through the position table.
- **Outputs are `predict`'s**: logits, a dict of logits, embeddings.
- **Backends.** TensorFlow and JAX export. Keras' torch exporter goes
  through `torch_xla`'s StableHLO bridge, which is experimental, not a
  kzoo dependency, and fixes every shape; we refuse it with an error that
  says what to do instead (a preset saved on torch loads on the others:
  the weights are the same).
- **ONNX** (`format="onnx"`, tasks and backbones) is on token ids: ONNX
  has no ops for the tokenizers. From the TensorFlow backend, through
  tf2onnx (as Keras' own ONNX export there), with one op handler Keras
  does not pass (`export_onnx`); checked with onnxruntime. On torch,
  Keras' exporter (torch.onnx) works only with every axis fixed, the
  batch too; JAX (Keras needs jax2onnx, which brings flax and orbax)
  and torch with a free batch raise `ExportError`.
"""

import inspect
import shutil
import tempfile
from pathlib import Path

import keras
import tensorflow as tf

from kzoo.utils.files import atomic_write, swap_into_place

# Backends whose Keras exporter kzoo supports for SavedModels.
SAVED_MODEL_BACKENDS = ("tensorflow", "jax")
RAW_TEXT_ENDPOINT = "serve"
TOKEN_IDS_ENDPOINT = "serve_token_ids"


class ExportError(ValueError):
    """A task that cannot be exported this way, on this backend, or in
    this state; the message says what to do.

    Example:
    ```python
    # A masked LM's preprocessor draws new masks on every call: there is
    # no fixed function of the text to serve (and on torch, no SavedModel).
    mlm = kzoo.BertMaskedLM.from_preset(
        "bert_tiny_en_uncased", load_weights=False, sequence_length=16)
    try:
        mlm.export("mlm_savedmodel")
    except kzoo.ExportError as error:
        print(error)
    ```
    """


def check_backend(owner):
    """Raise `ExportError` where the running backend cannot export a
    SavedModel."""
    backend = keras.backend.backend()
    if backend not in SAVED_MODEL_BACKENDS:
        raise ExportError(
            f"{owner}: a TensorFlow SavedModel with the tokenizer inside "
            f"is exported from the TensorFlow or JAX backend, not "
            f"{backend!r} (Keras exports torch models through torch_xla's "
            "experimental StableHLO bridge, with fixed shapes). The weights "
            "are the same on every backend: save the task with "
            "task.save_to_preset(folder), then in a process started with "
            "KERAS_BACKEND=tensorflow (or jax) load it with "
            "<TaskClass>.from_preset(folder) and call export(path) there.")


def token_id_signature(task, sequence_length):
    """The task's inputs as `keras.InputSpec`s, batch free and the
    sequence axis fixed at `sequence_length` (a dict, by input name)."""
    specs = {}
    for name in task.input_names:
        tensor = task.input[name] if isinstance(task.input, dict) else None
        shape = tuple(tensor.shape) if tensor is not None else (None, None)
        dtype = tensor.dtype if tensor is not None else "int32"
        shape = (None, sequence_length) + tuple(shape[2:])
        specs[name] = keras.InputSpec(shape=shape, dtype=dtype, name=name)
    return specs


def export_saved_model(task, filepath, num_texts=None, verbose=None):
    """Write `task` as a SavedModel whose `serve` endpoint takes raw
    strings (see this module's docstring; `Task.export` documents it)."""
    owner = f"{type(task).__name__}.export"
    preprocessor = task.preprocessor
    if preprocessor is None:
        raise ExportError(
            f"{owner}: the task has no preprocessor, so there is no "
            "tokenizer to put in the graph. Build it with its preprocessor "
            "(from_preset(...) makes one), or export token ids only with "
            "keras.Model.export(task, path).")
    if preprocessor.draws_per_call:
        # A masked LM's preprocessor draws fresh masks on every call: a
        # served graph would answer the same text differently each time.
        raise ExportError(
            f"{owner}: {type(preprocessor).__name__} draws anew on every "
            "call (masking), so a served model would not give predict's "
            "outputs. Export a task whose preprocessor packs text the same "
            "way every time, or the token ids: "
            "keras.Model.export(task, path).")
    check_destination(filepath, owner)
    check_backend(owner)
    names = preprocessor.serving_text_names(num_texts)
    specs = token_id_signature(task, preprocessor.sequence_length)
    archive = keras.export.ExportArchive()
    if keras.backend.backend() == "tensorflow":
        # The endpoint's concrete function names every variable it reads,
        # and the archive saves those. `track(task)` would add nothing but
        # time: on TensorFlow a tracked Keras model is walked as a
        # trackable when the archive is written, which traces the whole
        # model once more for a signature of its own (about 40% of the
        # export's time for a tiny BERT).
        ids_fn = archive.add_endpoint(TOKEN_IDS_ENDPOINT, task.__call__,
                                      [specs])
    else:
        # JAX: tracking is how the archive gets the variables it hands to
        # the jax2tf-converted function. A served model is for inference:
        # without its gradient, jax2tf converts the forward pass only (it
        # converted the backward pass too, half of each conversion).
        ids_fn = archive.track_and_add_endpoint(
            TOKEN_IDS_ENDPOINT, task, [specs],
            jax2tf_kwargs={"with_gradient": False})
    # The tokenizer's lookup tables (byte-level BPE's) are TensorFlow
    # resources the raw-text function captures; the archive saves only
    # what it tracks.
    for resource in text_resources(preprocessor):
        archive.track(resource)

    def serve(*texts):
        inputs = preprocessor.serving_inputs(*texts)
        inputs = {name: tf.cast(inputs[name], specs[name].dtype)
                  for name in specs}
        return ids_fn(inputs)

    # The loaded function's arguments carry the names (served.serve(
    # texts=...)), not *args' texts_0: tf.function reads the signature.
    serve.__signature__ = inspect.Signature([
        inspect.Parameter(name, inspect.Parameter.POSITIONAL_OR_KEYWORD)
        for name in names])
    signature = [tf.TensorSpec([None], tf.string, name=name)
                 for name in names]
    raw_fn = tf.function(serve, input_signature=signature, autograph=False)
    raw_fn.get_concrete_function()  # traced: the archive takes it as it is
    archive.add_endpoint(RAW_TEXT_ENDPOINT, raw_fn)
    # TensorFlow Serving calls `serving_default`; the archive would give it
    # its first endpoint (token ids), which must exist before this one.
    archive.add_endpoint("serving_default", raw_fn)
    verbose = True if verbose is None else bool(verbose)
    write_folder_whole(
        filepath, lambda staging: archive.write_out(staging, verbose=verbose))
    return filepath


def check_destination(path, owner):
    """Refuse a file, or a folder that holds other things than a
    SavedModel: export replaces the folder it writes."""
    path = Path(path)
    if path.is_file() or (path.is_dir() and any(path.iterdir()) and
                          not (path / "saved_model.pb").is_file()):
        raise ExportError(
            f"{owner}: {str(path)!r} is a file or a folder of other files; "
            "export writes a folder and would replace it. Give a new path "
            "(or an old export's folder).")


def write_folder_whole(path, write):
    """`write(staging)` into a hidden folder beside `path`, then swapped
    into place (kzoo writes atomically: a failed or killed export leaves
    `path` as it was)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=path.parent,
                                    prefix=f".{path.name}.staging-"))
    try:
        write(str(staging))
        swap_into_place(staging, path)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise


def text_resources(preprocessor):
    """TensorFlow resources (lookup tables) held by the keras-hub
    tokenizer inside the preprocessor's tokenizer, which Keras cannot see
    (kzoo keeps it out of Keras' tracking: `kzoo.core.tokenizer`)."""
    found, seen = [], set()

    def visit(value, depth):
        if id(value) in seen or depth > 3:
            return
        seen.add(id(value))
        # tf-text's tokenizers are tf.Modules (FastWordpieceTokenizer
        # holds its model), lookup tables TrackableResources.
        if isinstance(value, (tf.Module,
                              tf.saved_model.experimental.TrackableResource)):
            found.append(value)
            return
        if isinstance(value, (list, tuple)):
            for item in value:
                visit(item, depth + 1)
        elif isinstance(value, dict):
            for item in value.values():
                visit(item, depth + 1)
        elif hasattr(value, "__dict__") and (
                depth == 0 or isinstance(value, keras.layers.Layer)):
            for item in vars(value).values():
                visit(item, depth + 1)

    if preprocessor.tokenizer.has_assets:
        visit(preprocessor.tokenizer._hub(), 0)
    return found


# The backends whose ONNX export kzoo checks against onnxruntime.
ONNX_BACKENDS = ("tensorflow",)


def export_onnx(model, filepath, verbose=None, input_signature=None,
                opset_version=None):
    """`model` (a task or a backbone) as an ONNX graph on token ids, the
    sequence axis fixed at the preprocessor's length (a backbone: its
    `max_sequence_length`), the batch free. TensorFlow backend only."""
    owner = f"{type(model).__name__}.export"
    backend = keras.backend.backend()
    if backend == "torch" and _all_fixed(input_signature):
        # torch.onnx's dynamo exporter (Keras' first choice on torch)
        # exports these models when every axis is fixed.
        atomic_write(filepath, lambda tmp: keras.Model.export(
            model, str(tmp), format="onnx", verbose=verbose,
            input_signature=input_signature, opset_version=opset_version),
            suffix=".onnx")
        return filepath
    if backend not in ONNX_BACKENDS:
        # Checked on Keras 3.15.1 and torch 2.13: with a free batch axis
        # Keras takes torch's TorchScript exporter, which cannot trace
        # Keras' layer-norm shape arithmetic; on JAX Keras' ONNX path
        # needs jax2onnx (which brings flax, optax and orbax with it).
        fixed = (" (or, on torch, pass an input_signature whose every "
                 "axis is fixed, the batch too: torch.onnx exports that)"
                 if backend == "torch" else "")
        raise ExportError(
            f"{owner}: kzoo exports ONNX with a free batch axis from the "
            f"TensorFlow backend, not {backend!r}{fixed}. The weights are "
            "the same on every backend: save with save_to_preset(folder), "
            "and in a process started with KERAS_BACKEND=tensorflow load "
            "it with from_preset(folder) and export(path, format='onnx').")
    if input_signature is None:
        preprocessor = getattr(model, "preprocessor", None)
        length = preprocessor.sequence_length if preprocessor is not None \
            else getattr(model, "max_sequence_length", None)
        if length is None:
            raise ExportError(
                f"{owner}: pass input_signature (the sequence length of "
                "the ONNX graph is not known).")
        input_signature = [token_id_signature(model, length)]
    import tf2onnx

    signature = keras.tree.map_structure(_tensor_spec, input_signature)
    function = tf.function(lambda inputs: model(inputs, training=False))
    # tf2onnx ourselves, not through Keras' export: kzoo's exact GELU is
    # Keras' `gelu(approximate=False)`, which TensorFlow computes with
    # `erfc`; ONNX has no Erfc, tf2onnx (1.17) converts none, and Keras'
    # exporter passes no op handlers. We hand it erfc(x) = 1 - erf(x):
    # where GELU's z >= 0 (x = -z/sqrt(2) <= 0) the sum lies in [1, 2] and
    # loses nothing; elsewhere it loses ~1e-7 absolute, times z/2.
    atomic_write(filepath, lambda tmp: tf2onnx.convert.from_function(
        function, input_signature=signature, opset=opset_version,
        output_path=str(tmp),
        custom_op_handlers={"Erfc": (_erfc_as_erf, [])}), suffix=".onnx")
    if verbose or verbose is None:
        print(f"Saved ONNX model at {filepath!r}.")
    return filepath


def _all_fixed(input_signature):
    """Whether every axis of every spec in `input_signature` is known."""
    if input_signature is None:
        return False
    return all(dim is not None
               for spec in keras.tree.flatten(input_signature)
               for dim in spec.shape)


def _tensor_spec(spec):
    """A `keras.InputSpec` (or a `tf.TensorSpec`) as a `tf.TensorSpec`."""
    if isinstance(spec, tf.TensorSpec):
        return spec
    return tf.TensorSpec(spec.shape, spec.dtype, name=spec.name)


def _erfc_as_erf(ctx, node, name, args):
    """tf2onnx handler: Erfc(x) -> Sub(1, Erf(x))."""
    from tf2onnx import utils
    import numpy as np

    dtype = utils.map_onnx_to_numpy_type(ctx.get_dtype(node.input[0]))
    erf = ctx.make_node("Erf", [node.input[0]])
    one = ctx.make_const(utils.make_name(f"{name}_one"), np.array(1, dtype))
    node.type = "Sub"
    ctx.replace_inputs(node, [one.output[0], erf.output[0]])
