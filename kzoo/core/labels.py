"""Labels checked against what a task's loss expects, before it trains.

A label outside what the loss can read does not fail loudly: a sparse
cross-entropy gathers a class id >= num_classes or < 0 as whatever the
backend's gather returns (JAX clamps it), a NaN target turns the loss into
NaN, and training "works". So a task declares what its labels are
(`Task.label_spec()`, one of the specs below) and the task's data pipeline
checks them:

- labels in memory (lists, numpy arrays, tensors): eagerly, in
  `fit`/`evaluate`, before any work, with the first bad label and its
  index;
- labels inside a `tf.data.Dataset`: in the pipeline itself (a
  `tf.debugging.Assert` per batch, with the same message); `fit` and
  `evaluate` turn the failed assertion back into a `LabelError`.

The check applies to the task's default loss. A user who compiles a loss of
their own (`task.compile(loss=...)`) may feed labels that loss expects
(one-hot rows for categorical cross-entropy, say), and kzoo leaves them
alone.

Sample weights get the same treatment: finite and >= 0, one per example.
And what `fit`/`evaluate`/`predict` are asked besides the values
(`check_fit_call`, `check_dataset`): labels present when the loss needs
them, a positive batch size and epoch count, a dataset that is batched and
holds text, all raised before Keras starts its loop.
"""

import contextlib
import re

import keras
import numpy as np
import tensorflow as tf


class LabelError(ValueError):
    """Labels (or sample weights) that the task's loss cannot use."""


# Marks the message inside a failed tf.data assertion, to find it again.
_MARK = "<<kzoo>>"


class LabelSpec:
    """What a task's labels must be.

    Subclasses set `expected` (completes "labels must be ..."), implement
    `valid(values)` (elementwise, numpy or tf: True where a label is fine),
    `check_shape(shape)` (a message, or None) and list `bad_examples`.
    """

    expected = ""
    fix = ""
    noun = "labels"

    def valid(self, values, ops):
        raise NotImplementedError

    def check_shape(self, shape):
        return None

    def bad_examples(self, n):
        """`[(case name, labels for n examples, phrase of the error)]`."""
        return []

    # ------------------------------------------------------------------
    def message(self, owner, found):
        return (f"{owner}: {self.noun} must be {self.expected}; {found}. "
                f"{self.fix}").strip()

    def check(self, y, owner):
        """Raise a `LabelError` for the first bad label in `y` (concrete)."""
        values = _numpy(y)
        if values.dtype.kind in "USO":
            first = values.ravel()[0] if values.size else ""
            raise LabelError(
                f"{owner}: {self.noun} must be {self.expected}; got text "
                "values "
                f"(e.g. {_scalar(first)!r}). Map them to numbers first, e.g. "
                "`ids = {label: i for i, label in enumerate(sorted(set(y)))}`"
                ".")
        problem = self.check_shape(values.shape)
        if problem:
            raise LabelError(f"{owner}: {problem}")
        if values.size == 0:
            return
        values = values.astype("float64")
        bad = ~self.valid(values, np)
        if bad.any():
            index = np.unravel_index(int(np.argmax(bad)), bad.shape)
            where = ", ".join(map(str, index))
            raise LabelError(self.message(
                owner, f"{self.noun}[{where}] is {_scalar(values[index])}"))

    def check_tensor_spec(self, spec, owner):
        """The dtype and shape of a dataset's labels (`tf.TensorSpec`),
        checked when the pipeline is built, outside any graph."""
        if spec.dtype == tf.string:
            raise LabelError(
                f"{owner}: {self.noun} must be {self.expected}; the "
                "tf.data.Dataset holds text. Map them to numbers first "
                "(e.g. with a tf.lookup.StaticHashTable).")
        problem = self.check_shape(tuple(spec.shape))
        if problem:
            raise LabelError(f"{owner}: {problem} (in the tf.data.Dataset)")

    def graph_check(self, y, owner):
        """`y` with a per-batch assertion attached (inside `tf.data`);
        `check_tensor_spec` has checked its dtype and shape."""
        values = tf.cast(y, tf.float64)
        bad = tf.logical_not(self.valid(values, _TF))
        flat_bad = tf.reshape(bad, [-1])
        flat = tf.concat([tf.reshape(values, [-1]), [0.0]], 0)
        first = tf.gather(flat, tf.argmax(tf.cast(flat_bad, tf.int32)))
        template = self.message(
            owner, "a batch of the tf.data.Dataset holds {}")
        message = tf.strings.format(
            _MARK + template.replace("{", "{{").replace("}", "}}")
            .replace("{{}}", "{}") + _MARK, first)
        check = tf.debugging.Assert(
            tf.logical_not(tf.reduce_any(bad)), [message])
        with tf.control_dependencies([check]):
            return tf.identity(y)


class _TFOps:
    """The few elementwise ops `valid` needs, in tf (numpy has them)."""

    @staticmethod
    def isfinite(x):
        return tf.math.is_finite(x)

    @staticmethod
    def floor(x):
        return tf.floor(x)

    @staticmethod
    def equal(a, b):
        return tf.equal(a, b)

    @staticmethod
    def logical_and(a, b):
        return tf.logical_and(a, b)


_TF = _TFOps()


def _numpy(y):
    if isinstance(y, (tf.Tensor, tf.Variable)):
        return y.numpy()
    if isinstance(y, np.ndarray):
        return y
    if isinstance(y, (list, tuple)):
        return np.asarray(y)
    return np.asarray(keras.ops.convert_to_numpy(y))


def _scalar(value):
    value = value.item() if hasattr(value, "item") else value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


class ClassIds(LabelSpec):
    """One class id per example: an integer in [0, num_classes)."""

    def __init__(self, num_classes, what="class ids"):
        self.num_classes = int(num_classes)
        self.expected = (f"{what}: integers in [0, {self.num_classes - 1}] "
                         f"(num_classes={self.num_classes}), one per example")
        self.fix = ("Map the labels to 0..num_classes-1, or build the task "
                    "with a num_classes that covers them.")

    def valid(self, values, ops):
        return ops.logical_and(
            ops.logical_and(ops.isfinite(values),
                            ops.equal(values, ops.floor(values))),
            ops.logical_and(values >= 0, values < self.num_classes))

    def check_shape(self, shape):
        if len(shape) == 1 or (len(shape) == 2 and shape[1] == 1):
            return None
        if len(shape) == 2 and shape[1] == self.num_classes:
            return (f"labels must be {self.expected}; got shape {shape}, "
                    "which looks like one-hot rows. Pass class ids "
                    "(`np.argmax(y, axis=-1)`), or, for several classes per "
                    'example, problem_type="multi_label_classification".')
        return (f"labels must be {self.expected}, shape (batch,); got shape "
                f"{shape}.")

    def bad_examples(self, n):
        good = np.arange(n) % self.num_classes
        return [
            ("label_too_large", _with(good, self.num_classes),
             rf"\[0, {self.num_classes - 1}\].*is {self.num_classes}"),
            ("negative_label", _with(good, -1), "is -1"),
            ("nan_label", _with(good.astype("float32"), np.nan), "is nan"),
            ("fractional_label", _with(good.astype("float32"), 0.5),
             "is 0.5"),
            ("text_labels", np.array(["pos"] * n), "got text values"),
            ("one_hot_labels", np.eye(self.num_classes)[good], "one-hot"),
        ]


class Targets(LabelSpec):
    """Real-valued targets: finite numbers, `width` per example."""

    def __init__(self, width, what="regression targets"):
        self.width = int(width)
        shape = "(batch,) or (batch, 1)" if self.width == 1 else \
            f"(batch, {self.width})"
        self.expected = f"{what}: finite numbers of shape {shape}"
        self.fix = "Remove or fill the missing (NaN) or infinite targets."

    def valid(self, values, ops):
        return ops.isfinite(values)

    def check_shape(self, shape):
        if len(shape) == 2 and shape[1] in (self.width, None):
            return None
        if len(shape) == 1 and self.width == 1:
            return None
        return f"labels must be {self.expected}; got shape {shape}."

    def bad_examples(self, n):
        good = np.zeros((n, self.width) if self.width > 1 else (n,),
                        "float32")
        return [
            ("nan_target", _with(good, np.nan), "is nan"),
            ("inf_target", _with(good, np.inf), "is inf"),
            ("wrong_width", np.zeros((n, self.width + 1), "float32"),
             "shape"),
        ]


class MultiHot(LabelSpec):
    """Several classes per example: rows of `num_classes` values, 1 for a
    class that applies and 0 for one that does not (probabilities in
    [0, 1] are accepted too: soft labels)."""

    def __init__(self, num_classes):
        self.num_classes = int(num_classes)
        self.expected = (f"multi-hot rows: {self.num_classes} values in "
                         f"[0, 1] per example (shape (batch, "
                         f"{self.num_classes}))")
        self.fix = "Use 1 for each class that applies and 0 elsewhere."

    def valid(self, values, ops):
        return ops.logical_and(ops.isfinite(values),
                               ops.logical_and(values >= 0, values <= 1))

    def check_shape(self, shape):
        if len(shape) == 2 and shape[1] in (self.num_classes, None):
            return None
        hint = (" Class ids? Turn them into multi-hot rows, e.g. "
                "`np.eye(num_classes)[ids]`.") if len(shape) == 1 else ""
        return f"labels must be {self.expected}; got shape {shape}.{hint}"

    def bad_examples(self, n):
        good = np.eye(self.num_classes)[np.arange(n) % self.num_classes]
        return [
            ("multi_hot_value_2", _with(good, 2.0), "is 2"),
            ("multi_hot_nan", _with(good, np.nan), "is nan"),
            ("class_ids_for_multi_label", np.arange(n) % self.num_classes,
             "Class ids"),
        ]


def _with(values, bad):
    """`values` with its last element set to `bad`."""
    values = np.array(values, dtype="float32" if isinstance(bad, float)
                      else values.dtype)
    values.reshape(-1)[-1] = bad
    return values


def for_problem_type(problem_type, num_classes):
    """The label spec of a classifier head (`kzoo.core.classification`)."""
    from kzoo.core import classification
    if problem_type == classification.REGRESSION:
        return Targets(num_classes)
    if problem_type == classification.MULTI_LABEL:
        return MultiHot(num_classes)
    return ClassIds(num_classes)


# ----------------------------------------------------------------------
# What Task calls
# ----------------------------------------------------------------------
def active_spec(task):
    """The task's label spec, or None when unchecked (no spec, or the user
    compiled a loss of their own)."""
    if not getattr(task, "_kzoo_default_loss", True):
        return None
    return task.label_spec()


def check_in_memory(task, x, y=None, sample_weight=None):
    """Check labels and weights given to `fit`/`evaluate` as arrays or
    lists, eagerly, before any work."""
    owner = type(task).__name__
    count = _count(x)
    for what, values in (("y", y), ("sample_weight", sample_weight)):
        if values is None or isinstance(values, dict):
            continue
        length = _length(values)
        if count is not None and length is not None and length != count:
            raise LabelError(
                f"{owner}: {count} examples in x but {length} entries in "
                f"{what}; pass one per example.")
    spec = active_spec(task)
    if spec is not None and isinstance(y, dict):
        raise LabelError(
            f"{owner}: labels must be {spec.expected}; got a dict with keys "
            f"{sorted(y)}. Pass the labels as one array.")
    if spec is not None and y is not None:
        spec.check(y, owner)
    if sample_weight is not None and not isinstance(sample_weight, dict):
        WEIGHTS.check(sample_weight, owner)


def check_dataset(task, dataset):
    """`dataset` checked as far as its structure tells (batched text, labels
    of the right dtype and shape: errors now, before `fit` starts), with
    its labels and sample weights then checked per batch."""
    owner = type(task).__name__
    structure = dataset.element_spec
    elements = structure if isinstance(structure, tuple) else (structure,)
    _check_dataset_text(owner, elements[0])
    if len(elements) < 2:
        return dataset
    checks = {1: active_spec(task), 2: WEIGHTS}
    for position, rule in list(checks.items()):
        spec = elements[position] if position < len(elements) else None
        if rule is None or not isinstance(spec, tf.TensorSpec):
            del checks[position]  # absent, None or a dict: left to Keras
        else:
            rule.check_tensor_spec(spec, owner)
    if not checks:
        return dataset

    def check(*element):
        element = list(element)
        for position, rule in checks.items():
            element[position] = rule.graph_check(element[position], owner)
        return tuple(element)

    return dataset.map(check)


def _check_dataset_text(owner, spec):
    """Raw text in a dataset: batched tf.string (one tensor, or a tuple of
    them for pairs)."""
    for part in (spec if isinstance(spec, tuple) else (spec,)):
        if not isinstance(part, (tf.TensorSpec, tf.RaggedTensorSpec)):
            continue
        if part.dtype != tf.string:
            raise ValueError(
                f"{owner}: the tf.data.Dataset must hold raw text (tf.string)"
                f" as x, since the task has a preprocessor; it holds "
                f"{part.dtype.name}. Pass the text, or build the task with "
                "preprocessor=None to feed token-id dicts.")
        if part.shape.rank == 0:
            raise ValueError(
                f"{owner}: the tf.data.Dataset is not batched (its x is one "
                "string per element); call `.batch(batch_size)` on it.")


def check_fit_call(task, method, x, y, batch_size=None, epochs=None):
    """What `fit`/`evaluate`/`predict` are asked, besides the data's
    values: labels given when the loss needs them (not for `predict`), a
    usable batch size and epoch count."""
    owner = f"{type(task).__name__}.{method}"
    spec = active_spec(task) if method != "predict" else None
    if spec is not None and y is None:
        if isinstance(x, tf.data.Dataset):
            structure = x.element_spec
            if not (isinstance(structure, tuple) and len(structure) >= 2):
                raise LabelError(
                    f"{owner}: the tf.data.Dataset holds no labels; its "
                    f"elements must be (x, labels), labels being "
                    f"{spec.expected}.")
        elif x is None or isinstance(x, (list, tuple, np.ndarray, str,
                                         dict)):
            raise LabelError(
                f"{owner} needs labels: pass y, {spec.expected}.")
    for name, value in (("batch_size", batch_size), ("epochs", epochs)):
        if value is not None and (isinstance(value, bool) or not isinstance(
                value, (int, np.integer)) or value < 1):
            raise ValueError(
                f"{owner}: {name} must be a positive integer; got "
                f"{value!r} ({type(value).__name__}).")


@contextlib.contextmanager
def reraise_label_errors():
    """A failed label assertion inside `tf.data`, raised as the
    `LabelError` it describes."""
    try:
        yield
    except tf.errors.InvalidArgumentError as e:
        found = re.search(re.escape(_MARK) + "(.*?)" + re.escape(_MARK),
                          str(e), re.DOTALL)
        if not found:
            raise
        raise LabelError(found.group(1)) from None


class _Weights(LabelSpec):
    expected = "finite numbers >= 0 (one weight per example)"
    fix = "Use 0 to leave an example out."
    noun = "sample_weight"

    def valid(self, values, ops):
        return ops.logical_and(ops.isfinite(values), values >= 0)


WEIGHTS = _Weights()


def _count(x):
    """The number of examples in raw input `x` (None when unknown)."""
    if isinstance(x, tuple) and x:
        x = x[0]
    if isinstance(x, dict) and x:
        x = next(iter(x.values()))
    return _length(x)


def _length(values):
    if isinstance(values, (str, bytes)):
        return 1
    if isinstance(values, (list, np.ndarray)):
        return len(values)
    shape = getattr(values, "shape", None)
    if shape is not None and len(shape) and shape[0] is not None:
        return int(shape[0])
    return None
