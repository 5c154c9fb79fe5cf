"""ELMo's original checkpoints (bilm-tf: `options.json` + a weights
`.hdf5`) -> kzoo `ElmoBackbone`s and presets.

ELMo predates Hugging Face: no `transformers` release has it, so there is
no `model_type` to dispatch on. A folder in the original layout is
recognised by its files (`is_original_folder`: the family declares
`original_format="bilm-tf"`, which `kzoo.convert.base.original_format_module`
reads), and `hf_to_preset` (and `kzoo convert`) send it here.

Every tensor of the weights file is named and shape-checked against the
backbone before any is assigned; one not used is an error. What changes
on the way (each from the original code):

- `char_embed` (261 rows) gets a zero row 0 in front: kzoo's character
  ids are the original's plus one, 0 marking padding tokens;
- a CNN kernel `(1, width, dim, count)` (a 2-D conv over one row) becomes
  a 1-D one, `(width, dim, count)`;
- the highway's `W_carry`/`b_carry` gate the transform (kzoo's
  `gate_kernel`), `W_transform`/`b_transform` are the transform;
- TensorFlow's `LSTMCell` keeps its input and recurrent kernels in one
  `W_0` (`[input; previous output] @ W_0`), orders the gates i, j, f, o
  (Keras: i, f, j, o) and adds `forget_bias=1` to the forget gate at run
  time: the kernels are split, the gate columns reordered, and the 1
  folded into the stored bias. `RNN_0` is the forward stack, `RNN_1` the
  backward one; `W_P_0` is the projection.
"""

import json
import shutil
import tempfile
from pathlib import Path

import numpy as np

from kzoo.convert.errors import ConversionError
from kzoo.utils.files import swap_into_place

OPTIONS_FILE = "options.json"
VOCABULARY_FILES = ("vocab.txt", "vocab-2016-09-10.txt", "vocab_test.txt")
# TensorFlow's gate order i, j, f, o -> Keras' i, f, j, o.
_TF_TO_KERAS_GATES = (0, 2, 1, 3)


def weights_files(folder):
    return sorted(Path(folder).glob("*.hdf5")) + sorted(
        Path(folder).glob("*.h5"))


def is_original_folder(path):
    """A folder with ELMo's `options.json` and a weights file holding
    `char_embed`."""
    path = Path(path)
    if not (path / OPTIONS_FILE).is_file():
        return False
    return bool(_weights_file(path, strict=False))


def _weights_file(folder, strict=True):
    import h5py
    found = []
    for candidate in weights_files(folder):
        try:
            with h5py.File(candidate, "r") as f:
                if "char_embed" in f:
                    found.append(candidate)
        except OSError:
            continue
    if strict and len(found) != 1:
        raise ConversionError(
            f"{folder} must hold exactly one ELMo weights file (an .hdf5 "
            f"with `char_embed`); found {[p.name for p in found] or 'none'}.")
    return found[0] if found else None


def read_options(path):
    """`options.json` -> `ElmoBackbone` arguments (checked by the
    backbone's spec when it is built)."""
    try:
        with open(path, encoding="utf-8") as f:
            options = json.load(f)
        cnn, lstm = options["char_cnn"], options["lstm"]
        kwargs = {
            "filters": [list(pair) for pair in cnn["filters"]],
            "num_highway": cnn["n_highway"],
            "character_embedding_dim": cnn["embedding"]["dim"],
            "cnn_activation": cnn["activation"],
            "characters_per_token": cnn["max_characters_per_token"],
            "projection_dim": lstm["projection_dim"],
            "lstm_dim": lstm["dim"],
            "num_layers": lstm["n_layers"],
            "cell_clip": lstm.get("cell_clip"),
            "projection_clip": lstm.get("proj_clip"),
            "use_skip_connections": bool(lstm.get("use_skip_connections")),
        }
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ConversionError(
            f"{path} is not an ELMo options.json ({type(e).__name__}: {e}); "
            "it needs `char_cnn` (filters, n_highway, embedding.dim, "
            "activation, max_characters_per_token) and `lstm` (dim, "
            "projection_dim, n_layers).") from None
    # Training options say 261 characters; the released ones 262 (the
    # padding row added for inference). kzoo's table always has the row.
    if cnn.get("n_characters") not in (261, 262):
        raise ConversionError(
            f"{path}: n_characters is {cnn.get('n_characters')!r}; ELMo's "
            "character vocabulary is 261 (262 with the padding row).")
    for key in ("cell_clip", "projection_clip"):
        if kwargs[key] is not None:
            kwargs[key] = float(kwargs[key])
    return kwargs


def _lstm_specs(backbone, prefix, direction, layer):
    """The original names of one LSTM layer -> (kzoo variable, transform)."""
    lstm = backbone.get_layer(f"{direction}_lstm_{layer}")
    units = lstm.units
    inputs = lstm.kernel.shape[0]

    def gates(array):  # (..., 4 units) TF order -> Keras order
        blocks = np.split(array, 4, axis=-1)
        return np.concatenate([blocks[i] for i in _TF_TO_KERAS_GATES], -1)

    def bias(array):
        array = array.copy()
        array[2 * units:3 * units] += 1.0  # TF's forget_bias, folded in
        return gates(array)

    cell = f"{prefix}/RNN/MultiRNNCell/Cell{layer}/LSTMCell"
    return {
        f"{cell}/W_0": ([lstm.kernel, lstm.recurrent_kernel],
                        lambda w: [gates(w[:inputs]), gates(w[inputs:])]),
        f"{cell}/B": ([lstm.bias], lambda b: [bias(b)]),
        f"{cell}/W_P_0": ([lstm.projection_kernel], lambda w: [w]),
    }


def weight_specs(backbone):
    """Every tensor of the original weights file -> (kzoo variables, a
    function from the tensor to their values)."""
    cnn = backbone.get_layer("character_cnn")
    highway = backbone.get_layer("highway")
    projection = backbone.get_layer("token_projection")

    def with_padding_row(table):
        return [np.concatenate([np.zeros_like(table[:1]), table], 0)]

    specs = {"char_embed": ([cnn.embeddings], with_padding_row)}
    for i in range(len(cnn.filters)):
        specs[f"CNN/W_cnn_{i}"] = ([cnn.kernels[i]], lambda w: [w[0]])
        specs[f"CNN/b_cnn_{i}"] = ([cnn.biases[i]], lambda b: [b])
    for k in range(highway.num_layers):
        group = f"CNN_high_{k}"
        specs[f"{group}/W_transform"] = ([highway.transform_kernels[k]],
                                         lambda w: [w])
        specs[f"{group}/b_transform"] = ([highway.transform_biases[k]],
                                         lambda b: [b])
        specs[f"{group}/W_carry"] = ([highway.gate_kernels[k]], lambda w: [w])
        specs[f"{group}/b_carry"] = ([highway.gate_biases[k]], lambda b: [b])
    specs["CNN_proj/W_proj"] = ([projection.kernel], lambda w: [w])
    specs["CNN_proj/b_proj"] = ([projection.bias], lambda b: [b])
    for prefix, direction in (("RNN_0", "forward"), ("RNN_1", "backward")):
        for layer in range(backbone.num_layers):
            specs.update(_lstm_specs(backbone, prefix, direction, layer))
    return specs


def load_original_weights(backbone, weights_path):
    """Fill `backbone` from an original weights file; every tensor is
    matched and checked before any is assigned."""
    import h5py
    specs = weight_specs(backbone)
    try:
        with h5py.File(weights_path, "r") as f:
            names = []
            f.visititems(lambda name, obj: names.append(name)
                         if isinstance(obj, h5py.Dataset) else None)
            unexpected = sorted(set(names) - set(specs))
            missing = sorted(set(specs) - set(names))
            values, problems = {}, []
            for name in sorted(set(specs) & set(names)):
                variables, transform = specs[name]
                converted = transform(np.asarray(f[name][...], "float32"))
                for variable, value in zip(variables, converted):
                    if tuple(variable.shape) != value.shape:
                        problems.append(
                            f"{name} {f[name].shape} does not fit "
                            f"{variable.path} {tuple(variable.shape)}")
                values[name] = converted
    except OSError as e:
        raise ConversionError(
            f"Cannot read the ELMo weights file {weights_path}: {e}. It is "
            "corrupt or truncated, or not an HDF5 file.") from None
    if missing or unexpected or problems:
        lines = ([f"missing: {n}" for n in missing]
                 + [f"unexpected: {n}" for n in unexpected] + problems)
        raise ConversionError(
            f"{weights_path} does not match the ElmoBackbone its options "
            "describe:\n  - " + "\n  - ".join(lines))
    for name, (variables, _) in specs.items():
        for variable, value in zip(variables, values[name]):
            variable.assign(value)
    return sorted(specs)


def backbone_from_folder(folder, **overrides):
    """An `ElmoBackbone` with the weights of an original-layout folder."""
    from kzoo.models.elmo import ElmoBackbone
    folder = Path(folder)
    kwargs = {**read_options(folder / OPTIONS_FILE), **overrides}
    backbone = ElmoBackbone(**kwargs)
    load_original_weights(backbone, _weights_file(folder))
    return backbone


def to_preset(src, dest, overwrite=False, verbose=True, source=None,
              metadata=None, **unused):
    """Convert an original-layout folder into a kzoo preset folder, whole
    or not at all. A word vocabulary in the folder (`vocab.txt`, or the
    1B Word Benchmark's `vocab-2016-09-10.txt`) becomes the tokenizer's."""
    from kzoo.models.elmo import ElmoTokenizer
    from kzoo.core.preset_writer import update_metadata
    src, dest = Path(src), Path(dest)
    if dest.exists() and any(dest.iterdir()) and not overwrite:
        raise ConversionError(
            f"{dest} exists and is not empty; pass overwrite=True "
            "(`--overwrite`) to replace it.")
    backbone = backbone_from_folder(src)
    dest.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=dest.parent,
                                    prefix=f".{dest.name}.staging-"))
    try:
        backbone.save_to_preset(staging)
        vocabulary = next((src / n for n in VOCABULARY_FILES
                           if (src / n).is_file()), None)
        if vocabulary is not None:
            ElmoTokenizer(vocabulary=vocabulary).save_to_preset(staging)
        update_metadata(staging, name=dest.name,
                        source=source or str(src),
                        converted_from={"format": "bilm-tf",
                                        "options": OPTIONS_FILE},
                        **(metadata or {}))
        swap_into_place(staging, dest)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    if verbose:
        import sys
        print(f"Wrote kzoo preset {dest} from ELMo folder {src}",
              file=sys.stderr)
    return backbone
