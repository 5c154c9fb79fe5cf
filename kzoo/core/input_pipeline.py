"""How `Task.fit`, `evaluate` and `predict` feed Keras: the choices that
depend on the backend or on measured costs, in one place.

`Task._make_dataset` turns raw examples into what Keras steps on; this
module decides how. Each choice was measured (2-core machine unless said):

- In-memory text is prepared once per call (`preprocess_once`:
  tokenizing and packing), not in a `dataset.map` that each epoch's
  iterator instantiates anew (seconds per epoch for a tokenizer's graph).
  Up to one chunk (`EAGER_PREPROCESS_LIMIT`, 1,024 examples) it runs
  eagerly: a traced graph costs 0.6-0.9 s (WordPiece, byte-level BPE; 4 s
  with keras-hub's BPE graph, which kzoo ran before its own) on first
  use, again for each new input signature, where 1,024 texts
  take 0.5-0.6 s eagerly (a RoBERTa classifier's fit/evaluate/predict/
  predict-pairs on 1,024 texts: 19.3 -> 6.3 s on TensorFlow). Above, the
  traced graph is called chunk by chunk, directly: inside a `dataset.map`
  every call's new iterator set it up anew (0.3 s for a byte-level BPE
  preprocessor; 1.5-2 s with keras-hub's graph).
- On JAX and torch the prepared examples go to Keras as NumPy arrays
  (`batches_from_arrays`): each new epoch's tf.data iterator stalled JAX's
  first step of the epoch 12-30 s (MiniLM fine-tune), and Keras' torch
  loader over the tf.data iterator stalled at epoch ends (4-5 s idle, up
  to 52 s under load; 0.01 s from arrays). TensorFlow reads tf.data
  natively and keeps it, as does anything that maps per batch (fresh
  masks, a task's `adapt_batches`) and several processes, which shard a
  tf.data pipeline.
- A pipeline kzoo built is repeated, with `steps_per_epoch` (or
  `validation_steps`) set to one pass (`one_iterator_for_all_epochs`):
  on TensorFlow a new iterator per epoch stalled random epochs' first
  step 4-7 s (MiniLM, 512 passages; ~20 s at 2,048); over one iterator
  none did (4 epochs: fit 72 s against 84-89 s).
- `fit(validation_split=f)` holds out the last fraction `f` of in-memory
  examples itself (`hold_out`, Keras' rule, before shuffling) and hands
  them on as `validation_data`: Keras' own split slices only arrays, so
  it refused TensorFlow's tf.data pipeline, and it happens after kzoo has
  planned the learning-rate schedule, which then spanned every example.
- Keras' `fit` evaluates its validation data after each epoch by calling
  `evaluate` on it; `FitValidation` lets `Task.evaluate` recognise that
  call (kzoo prepared the data already): by Keras' private
  `_use_cached_eval_dataset` argument, or else by its data.
"""

import contextlib
import math
import numbers
import weakref

import keras
import tensorflow as tf

from kzoo.distribution.processes import in_torch_process_group
from kzoo.distribution.tf_strategy import model_strategy
from kzoo.utils import private_apis

# The argument Keras' `fit` passes to `evaluate` for its validation
# (private; checked on Keras 3.15.1; kzoo/utils/private_apis.py).
_CACHED_EVAL = "keras:fit._use_cached_eval_dataset"

# Examples per preprocessing call in `preprocess_once`: large enough that
# the calls are few, small enough that one call's tensors stay small.
PREPROCESS_CHUNK = 1024
# Up to this many examples (one chunk), `preprocess_once` runs the
# preprocessor eagerly. Its traced graph costs 0.6-0.9 s (WordPiece,
# byte-level BPE; 4 s with keras-hub's BPE graph) on first use, and each
# new input signature (fit's texts with labels, predict's without, pairs)
# pays it again. Eagerly, 1,024 texts take 0.5-0.6 s (measured on 2
# cores; 256 texts: 0.16-0.2 s eagerly). Above that, the graph's lower
# cost per example (0.04-0.25 ms, against ~0.6 ms) wins.
EAGER_PREPROCESS_LIMIT = 1024
# Keras' default batch size, used where `fit` was given none.
DEFAULT_BATCH_SIZE = 32


def preprocess_once(examples, preprocessor):
    """In-memory examples (a dataset of raw elements) -> the deterministic
    part of their preprocessing (`Preprocessor.prepare`: tokenizing,
    packing), for all of them, as tf tensors.

    The same text gives the same packed rows every epoch, so `fit` runs
    that part once rather than in a `dataset.map` that every epoch's
    iterator instantiates anew (seconds per epoch for a tokenizer's graph:
    most of a small fine-tuning run's time); what is drawn per batch
    (masks) stays in the pipeline (`Preprocessor.draw`). Packed rows have
    a fixed length, so the chunks concatenate.
    """
    element = examples.element_spec
    if isinstance(element, tuple) and len(element) > 1:
        preprocessor.refuse_labels(element[1], None)
    if examples.cardinality() <= EAGER_PREPROCESS_LIMIT:
        preprocessor._ensure_setup()
        prepare = preprocessor.prepare
    else:
        prepare = preprocessor.traced("prepare")
    # The traced graph is called directly, chunk by chunk: inside a
    # `dataset.map` every call's new iterator would set it up anew.
    chunks = [prepare(*element) if isinstance(element, tuple) else
              prepare(element)
              for element in examples.batch(PREPROCESS_CHUNK)]
    return keras.tree.map_structure(
        lambda *parts: tf.concat(parts, axis=0), *chunks)


def batches_from_arrays(task, maps_per_batch):
    """Whether prepared in-memory examples go to Keras as NumPy arrays
    (Keras shuffles and batches them each epoch) rather than as a tf.data
    pipeline.

    On JAX, each new epoch's tf.data iterator stalled the first step of
    the epoch while the previous steps still ran (12-30 s at each epoch
    start, fine-tuning MiniLM on a 2-core machine; 0 s from arrays). On
    torch, Keras' loader over the tf.data iterator stalled at the end of
    epochs instead (4-5 s on an idle 2-core machine, up to 52 s under
    load; 0.01 s from arrays). TensorFlow's steps read tf.data natively,
    so it keeps the pipeline; so does a task that maps every batch
    (`maps_per_batch`: a preprocessor that draws per batch, masks, or a
    task that adapts the batches; both are tf.data maps).

    A multi-process distribution shards a tf.data pipeline across the
    processes and refuses arrays; torch's DDP processes keep the pipeline
    they are tested with (the same order on every rank)."""
    return (keras.backend.backend() in ("jax", "torch")
            and not multi_process(task)
            and not maps_per_batch)


def multi_process(task):
    """Whether the steps run in several processes (keras.distribution
    across hosts, torch DDP, tf.distribute across workers), each reading
    its shard of the input pipeline."""
    distribution = keras.distribution.distribution()
    return (getattr(distribution, "num_processes", 1) > 1
            or in_torch_process_group()
            or isinstance(model_strategy(task),
                          tf.distribute.MultiWorkerMirroredStrategy))


def one_iterator_for_all_epochs(task, dataset, steps_key, fit_kwargs):
    """A pipeline `_make_dataset` built (from in-memory examples or the
    user's dataset), repeated, with `steps_key` (`steps_per_epoch` or
    `validation_steps`) set to one pass: Keras then walks a single
    iterator through every epoch instead of making a new one per epoch.

    On TensorFlow, a new epoch's iterator stalled the epoch's first step
    4-7 s at random epochs (MiniLM fine-tune, 512 passages, 2-core
    machine; ~20 s per epoch at 2048); over the repeated pipeline no
    epoch stalled (4 epochs: fit 72 s against 84-89 s). Each pass still
    reshuffles, and per-batch draws (masks) stay fresh. A user's steps
    count, a pipeline of unknown length, and several processes (each
    reading its own shard, so one pass is not `cardinality` steps) keep
    Keras' iterator per epoch.

    Returns the dataset and the keyword arguments for Keras' `fit`."""
    if not isinstance(dataset, tf.data.Dataset) \
            or fit_kwargs.get(steps_key) is not None \
            or multi_process(task):
        return dataset, fit_kwargs
    steps = int(dataset.cardinality())
    if steps <= 0:
        return dataset, fit_kwargs
    return dataset.repeat(), {**fit_kwargs, steps_key: steps}


def checked_validation_split(validation_split, x, owner):
    """`fit`'s `validation_split` as a float in [0, 1), or a ValueError:
    a bad value, or a split asked of data with no last fraction to slice
    (a `tf.data.Dataset`, a generator), which Keras refuses too."""
    if isinstance(validation_split, bool) or not isinstance(
            validation_split, numbers.Real) or not \
            0 <= float(validation_split) < 1:
        raise ValueError(
            f"{owner}: validation_split must be a number in [0, 1) (the "
            f"share of the examples held out); got {validation_split!r}.")
    validation_split = float(validation_split)
    if validation_split and not _is_in_memory(x):
        raise ValueError(
            f"{owner}: Argument `validation_split` is only supported for "
            f"tensors or NumPy arrays (in-memory examples: lists, arrays, "
            f"tensors), as Keras' fit; got {type(x).__name__}, which has "
            f"no last fraction to hold out. Pass validation_data instead "
            f"(e.g. dataset.take(n) to validate, dataset.skip(n) to "
            f"train).")
    return validation_split


def _is_in_memory(x):
    if isinstance(x, (tuple, dict)):
        return bool(x) and all(_is_in_memory(part) for part in
                               (x.values() if isinstance(x, dict) else x))
    if isinstance(x, (tf.data.Dataset, keras.utils.PyDataset, str, bytes)):
        return False
    return hasattr(x, "__getitem__") and _example_count(x) is not None


def _example_count(x):
    """Examples along the first axis of in-memory `x` (its first part, for
    a tuple of texts or a dict of arrays); None when unknown."""
    while isinstance(x, (tuple, dict)) and x:
        x = next(iter(x.values())) if isinstance(x, dict) else x[0]
    shape = getattr(x, "shape", None)
    if shape is not None and len(shape) and shape[0] is not None:
        return int(shape[0])
    return len(x) if hasattr(x, "__len__") else None


def hold_out(x, y, sample_weight, validation_split, owner):
    """Keras' `validation_split` on in-memory examples of any form a task
    takes (texts, pairs of texts as a tuple, word lists, a dict of
    arrays; labels and weights alike): the first
    `floor(n * (1 - validation_split))` examples train, the rest validate,
    in the order given (before any shuffling), as Keras' own split.

    Returns `((x, y, sample_weight), validation_data)`, the latter a tuple
    for `fit`'s `validation_data` (`(x,)`, `(x, y)` or `(x, y,
    sample_weight)`)."""
    count = _example_count(x)
    split_at = int(math.floor(count * (1.0 - validation_split)))
    if split_at == 0 or split_at == count:
        raise ValueError(
            f"{owner}: the training data holds {count} examples, which is "
            f"not sufficient to split into a training and a validation "
            f"part with validation_split={validation_split} (the first "
            f"{split_at} would train); give more examples or another "
            f"validation_split.")
    train = tuple(_rows(part, 0, split_at) for part in (x, y, sample_weight))
    held = [_rows(part, split_at, count) for part in (x, y, sample_weight)]
    while held[-1] is None:  # positions matter: drop trailing Nones
        held.pop()
    return train, tuple(held)


def _rows(values, start, stop):
    # A tuple is parallel parts of each example (a pair's two texts), a
    # dict named parts: each is sliced; anything else is one sequence of
    # examples (a list, an array, a tensor, ragged too).
    if values is None:
        return None
    if isinstance(values, dict):
        return {key: _rows(value, start, stop)
                for key, value in values.items()}
    if isinstance(values, tuple):
        return tuple(_rows(value, start, stop) for value in values)
    return values[start:stop]


def steps_per_epoch(data, batch_size):
    """Batches in one pass over `data` (a batched tf.data.Dataset, or
    arrays batched by `fit`); None when that cannot be known."""
    if isinstance(data, tf.data.Dataset):
        cardinality = int(data.cardinality())
        return cardinality if cardinality > 0 else None
    leaves = keras.tree.flatten(data)
    if not leaves or not hasattr(leaves[0], "__len__"):
        return None
    return -(-len(leaves[0]) // (batch_size or DEFAULT_BATCH_SIZE))


class InMemoryBatches:
    """Prepared in-memory examples as NumPy arrays, with how Keras is to
    batch them (`batches_from_arrays`).

    `arrays()` gives them as keyword arguments of `fit` and `evaluate`
    (whose third positional argument is `batch_size`, not
    `sample_weight`); `data` as the tuple Keras takes for
    `validation_data`.
    """

    def __init__(self, prepared, batch_size, shuffle):
        arrays = keras.tree.map_structure(lambda t: t.numpy(), prepared)
        self.x, self.y, self.sample_weight = \
            keras.utils.unpack_x_y_sample_weight(arrays)
        self.batch_size = batch_size
        self.shuffle = bool(shuffle)

    def arrays(self):
        return {"x": self.x, "y": self.y, "sample_weight": self.sample_weight}

    @property
    def data(self):
        """`(x,)`, `(x, y)` or `(x, y, sample_weight)`."""
        data = [self.x, self.y, self.sample_weight]
        while data[-1] is None:  # positions matter: drop trailing Nones
            data.pop()
        return tuple(data)


class FitValidation:
    """The validation data of the `fit` running on each task, so that
    `Task.evaluate` can tell Keras' per-epoch validation call (whose `x`
    is that data's, already prepared by `fit`) from a user's call.

    Keras' `fit` says so with a private argument,
    `_use_cached_eval_dataset=True` (Keras 3.15). Without it (a Keras
    that renamed it), the call is known by its data: Keras passes
    `x=val_x`, the first part of `validation_data` as
    `keras.utils.unpack_x_y_sample_weight` splits it, the very object
    `fit` was given. (`Task.fit` hands Keras no `validation_split`: it
    holds the fraction out itself, `hold_out`, as `validation_data`, which
    the fallback recognises too.)"""

    _running = weakref.WeakKeyDictionary()

    @classmethod
    @contextlib.contextmanager
    def during_fit(cls, task, validation_data):
        """Within: `is_fits_validation(task, x)` is True for the `x` Keras
        will read from `validation_data`."""
        if validation_data is None:
            yield
            return
        x = keras.utils.unpack_x_y_sample_weight(validation_data)[0]
        cls._running[task] = x
        try:
            yield
        finally:
            cls._running.pop(task, None)

    @classmethod
    def is_fits_validation(cls, task, x, evaluate_kwargs):
        """Whether `task.evaluate(x, **evaluate_kwargs)` is Keras' `fit`
        validating on data `fit` prepared."""
        if private_apis.has(_CACHED_EVAL):
            return bool(evaluate_kwargs.get("_use_cached_eval_dataset"))
        return x is not None and cls._running.get(task) is x
