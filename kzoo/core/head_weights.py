"""A task's own weights (its heads), stored apart from the backbone's.

A preset keeps the backbone in `model.weights.h5` and the task's heads in
`task.weights.h5`, so each weight is stored once. The heads file is keyed
by head layer (`mlm_head/transform/kernel`, `nsp_head/bias`, ...), not by
position in one task, so any task can take the heads it shares with
another: a `BertMaskedLM` loads the MLM head from a preset converted or
saved as a `BertPretrainer`, and a classifier built on a pretraining
checkpoint knows its classifier is new.

Why not Keras' own `save_weights`: it keys variables by the position of
each layer in one model, so a file saved from one task cannot fill part of
another, and it always includes the backbone.

Matching by layer name alone would give a head to a task that means
something else by it: a sequence classifier and a token classifier both
call their head `classifier`, with the same shapes. So each head is stored
with its kind (`head_kind`), and loads only into a head of the same kind:
a head layer made for one job says so itself (`MaskedLMHead.head_kind =
"masked_lm"`, so a masked LM takes a pretrainer's MLM head); a generic
layer (a Dense) means what its task does (the task's `task_kind`, else
its class name).
"""

import h5py
import keras
import numpy as np

from kzoo.utils.files import atomic_write

FORMAT = "kzoo-heads-v1"  # the file's `format` attribute


def head_layers(task):
    """The task's own layers: every top-level layer but the backbone and
    the inputs, in model order. A head that is a task itself (the family
    classifier `MultipleChoice` scores each choice with) gives its own
    layers, so their keys read as that classifier's."""
    layers = []
    for layer in task.layers:
        if layer is task.backbone or type(layer).__name__ == "InputLayer":
            continue
        if isinstance(layer, keras.Model) and getattr(
                layer, "backbone", None) is task.backbone:
            layers += head_layers(layer)
        else:
            layers.append(layer)
    return layers


def head_kind(task, layer):
    """What `layer`, one of `task`'s heads, was made for (see the module
    doc)."""
    return (getattr(layer, "head_kind", None)
            or getattr(type(task), "task_kind", None)
            or type(task).__name__)


def head_kinds(task):
    """`{head name: kind}` for every head of `task` that has weights."""
    return {layer.name: head_kind(task, layer)
            for layer in head_layers(task) if layer.weights}


def head_variables(task):
    """`{key: variable}` for every variable a head owns (a tied embedding
    belongs to the backbone and is left out)."""
    backbone_ids = {id(v) for v in task.backbone.weights}
    found = {}
    for layer in head_layers(task):
        for variable in layer.weights:
            if id(variable) in backbone_ids:
                continue
            found[_key(layer, variable)] = variable
    return found


def _key(layer, variable):
    # Variable paths read "<scope>/<layer>/<sublayer>/<name>"; keep what
    # follows the head's own name so the key does not depend on the scope
    # the task was built in.
    marker = f"{layer.name}/"
    path = variable.path
    if marker in path:
        return marker + path.split(marker, 1)[1]
    return marker + variable.name


def save_head_weights(task, path):
    """Write the task's head variables to `path` (atomically)."""
    variables = head_variables(task)

    def write(tmp):
        with h5py.File(tmp, "w") as f:
            f.attrs["format"] = FORMAT
            f.attrs["task_class_name"] = type(task).__name__
            for key, variable in variables.items():
                f.create_dataset(key, data=np.asarray(variable.numpy()))
            for head, kind in head_kinds(task).items():
                if head in f:
                    f[head].attrs["head_kind"] = kind
    atomic_write(path, write, suffix=".h5")


def is_head_weights_file(path):
    try:
        with h5py.File(path, "r") as f:
            return f.attrs.get("format") == FORMAT
    except OSError:
        return False


def read_head_weights(path, error_cls=ValueError):
    """`{key: array}` from a heads file; a corrupt file is an error that
    says so."""
    return _read(path, error_cls)[0]


def _read(path, error_cls):
    """`({key: array}, {head: kind}, saving task's class name)`; the kinds
    of a file written before kinds were stored are None."""
    arrays, kinds, task_name = {}, {}, None
    try:
        with h5py.File(path, "r") as f:
            task_name = f.attrs.get("task_class_name")
            def visit(name, obj):
                if isinstance(obj, h5py.Dataset):
                    arrays[name] = obj[()]
            f.visititems(visit)
            kinds = {head: f[head].attrs.get("head_kind") for head in f
                     if isinstance(f[head], h5py.Group)}
    except OSError as e:
        raise error_cls(
            f"{path} is not a readable heads file (corrupt or truncated?): "
            f"{e}. Delete it and save or convert the preset again.") from None
    return arrays, kinds, task_name


def load_head_weights(task, path, error_cls=ValueError):
    """Fill each head of `task` whose weights `path` holds, for the same
    kind of head (see the module doc).

    A head is loaded whole or not at all; a head the file has with other
    shapes (a different `num_classes`, say) is an error naming it, raised
    before any variable is assigned. Returns `(loaded, foreign)`: the
    names of the heads loaded, and `{name: kind in the file}` of those the
    file has but made for another kind of head (left as they were).
    """
    arrays, file_kinds, file_task = _read(path, error_cls)
    variables = head_variables(task)
    kinds = head_kinds(task)
    by_head = {}
    for key, variable in variables.items():
        by_head.setdefault(key.split("/", 1)[0], []).append((key, variable))
    plan, problems, foreign = [], [], {}
    for head, entries in by_head.items():
        present = [key for key, _ in entries if key in arrays]
        if not present:
            continue
        stored_kind = file_kinds.get(head)
        if stored_kind is None and file_task != type(task).__name__:
            # Written before kinds were stored: only a head that names its
            # own kind, or the same task class, is known to match.
            stored_kind = head_kind_of_layer(task, head) or file_task
        if stored_kind is not None and stored_kind != kinds[head]:
            foreign[head] = stored_kind
            continue
        missing = [key for key, _ in entries if key not in arrays]
        wrong = [f"{key} {tuple(arrays[key].shape)} in the file, "
                 f"{tuple(variable.shape)} in the model"
                 for key, variable in entries
                 if key in arrays and
                 tuple(arrays[key].shape) != tuple(variable.shape)]
        if missing or wrong:
            problems.append(
                f"{head}: " + "; ".join(
                    [f"missing {k}" for k in missing] + wrong))
        else:
            plan.append((head, entries))
    if problems:
        raise error_cls(
            f"The heads in {path} do not fit {type(task).__name__} as "
            "configured: " + " | ".join(problems) + ". Build the task with "
            "the arguments it was saved with (e.g. the same num_classes).")
    for _, entries in plan:
        for key, variable in entries:
            variable.assign(arrays[key])
    return [head for head, _ in plan], foreign


def head_kind_of_layer(task, head):
    """The kind `task`'s head layer `head` names itself, or None for a
    generic layer."""
    for layer in head_layers(task):
        if layer.name == head:
            return getattr(layer, "head_kind", None)
    return None
