"""Where values in the text pipeline change type, in one place.

Inside kzoo's tokenizers and preprocessors everything is TensorFlow: the
same code then runs eagerly and inside `tf.data`, whatever the Keras
backend. Three boundaries need care:

- In: what a user passes (strings, lists, numpy arrays, tf tensors) is
  checked and turned into tf string tensors (`text_tensor`).
- Across keras-hub: called eagerly, keras-hub's layers run their Python
  path and return Python lists (ragged ids) or *backend* tensors (a
  `jax.Array`, a `torch.Tensor`); `as_tf` brings those back to tf before
  any tf op sees them.
- Out: called eagerly, a tokenizer or preprocessor returns what keras-hub
  returns (`eager_outputs`): backend tensors for dense numbers, Python
  lists for ragged ids, Python strings for text. Inside `tf.data` or a
  `tf.function` everything stays tf.
"""

import itertools

import keras
import numpy as np
import tensorflow as tf


def describe(value, limit=80):
    """A short `repr` of a bad argument, for error messages."""
    text = repr(value)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{text} ({type(value).__name__})"


def text_tensor(value, owner, argument="inputs"):
    """Check that `value` is text and return it as a tf string tensor.

    Accepted: a string (a scalar), a non-empty list/tuple or numpy array of
    strings, or a tf string tensor (dense or ragged). Anything else raises
    a ValueError naming `owner` (the layer), the argument and the value.
    """
    expected = ("text: a string, a non-empty list of strings, or a "
                "tf.string tensor")
    layer = "preprocessor" if owner.endswith("Preprocessor") else "tokenizer"
    example = f"e.g. {layer}(['The quick brown fox.'])"
    if isinstance(value, (tf.Tensor, tf.RaggedTensor)):
        if value.dtype != tf.string:
            raise ValueError(
                f"{owner}: `{argument}` must be {expected}; got a tensor of "
                f"{value.dtype.name}. Pass the raw text, not token ids.")
        if tf.executing_eagerly() and int(tf.size(value)) == 0 \
                and value.shape.rank:
            raise ValueError(_empty_message(owner, argument, value, example))
        return value
    if isinstance(value, (str, bytes)):
        _check_unicode(value, owner, argument)
        return _to_string_tensor(value, owner, argument)
    if isinstance(value, (list, tuple, np.ndarray)):
        array = value if isinstance(value, np.ndarray) else None
        items = value.ravel().tolist() if array is not None else list(value)
        if array is not None and array.dtype.kind not in "USO":
            raise ValueError(
                f"{owner}: `{argument}` must be {expected}; got a numpy "
                f"array of {array.dtype}. Pass the raw text, not token ids.")
        if not items:
            raise ValueError(_empty_message(owner, argument, value, example))
        bad = next((x for x in items if not isinstance(x, (str, bytes))),
                   None)
        if bad is not None:
            raise ValueError(
                f"{owner}: `{argument}` must be {expected}; it holds "
                f"{describe(bad)}. {example}.")
        for item in items:
            _check_unicode(item, owner, argument)
        return _to_string_tensor(value, owner, argument)
    if value is None:
        raise ValueError(
            f"{owner}: `{argument}` is None; it must be {expected}. "
            f"{example}.")
    raise ValueError(
        f"{owner}: `{argument}` must be {expected}; got {describe(value)}. "
        f"{example}.")


def _empty_message(owner, argument, value, example):
    return (f"{owner}: `{argument}` is an empty batch ({describe(value)}); "
            f"there is no text to process. Pass at least one string, "
            f"{example}.")


def _check_unicode(text, owner, argument):
    # Python strings may hold lone surrogates, which have no UTF-8.
    if isinstance(text, str):
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as e:
            raise ValueError(
                f"{owner}: `{argument}` holds a string that is not valid "
                f"Unicode ({e.reason} at position {e.start}: "
                f"{text[max(0, e.start - 10):e.end + 10]!r}); it has no "
                "UTF-8 form. Clean it first, e.g. "
                "`text.encode('utf-8', 'replace').decode('utf-8')`.") \
                from None


def _to_string_tensor(value, owner, argument):
    try:
        return tf.convert_to_tensor(value, dtype=tf.string)
    except (ValueError, TypeError) as e:
        # Ragged nested lists and the like.
        raise ValueError(
            f"{owner}: `{argument}` must be a string or a flat list of "
            f"strings; got {describe(value)} ({e}).") from None


def as_tf(x, dtype=tf.int32):
    """A keras-hub layer's output as tf, however it came back.

    Python lists of ids (ragged rows) become a `tf.RaggedTensor`; numpy
    arrays and backend tensors become dense tf tensors; tf values pass
    through untouched (in a graph that is all there is).
    """
    if isinstance(x, (tf.Tensor, tf.RaggedTensor)) or x is None:
        return x
    if isinstance(x, tuple):
        return tuple(as_tf(part, dtype) for part in x)
    if isinstance(x, list):
        if all(isinstance(row, (list, tuple, np.ndarray)) for row in x):
            return _ragged_from_rows(x, dtype)
        return tf.convert_to_tensor(np.asarray(x), dtype=dtype)
    if not isinstance(x, np.ndarray):
        x = keras.ops.convert_to_numpy(x)
    return tf.convert_to_tensor(x)


def _ragged_from_rows(rows, dtype):
    # Faster than tf.ragged.constant, and typed even when every row is empty.
    lengths = [len(row) for row in rows]
    flat = np.fromiter(
        (int(t) for t in itertools.chain.from_iterable(rows)),
        dtype=dtype.as_numpy_dtype, count=sum(lengths))
    return tf.RaggedTensor.from_row_lengths(
        flat, np.asarray(lengths, dtype=np.int64))


def eager_outputs(structure):
    """Called eagerly: tf values -> what keras-hub's layers return (backend
    tensors for dense numbers, Python lists for ragged ids, Python strings
    for text). In a graph (`tf.data`, `tf.function`) nothing changes."""
    if not tf.executing_eagerly():
        return structure
    return keras.tree.map_structure(_eager_value, structure)


def _eager_value(x):
    if x is None or isinstance(x, (str, bytes, int, float, bool)):
        return x
    if isinstance(x, tf.RaggedTensor):
        return _decoded(x.to_list())
    if isinstance(x, tf.Tensor):
        if x.dtype == tf.string:
            value = x.numpy()  # bytes for a scalar, else an array
            return _decoded(value.tolist() if hasattr(value, "tolist")
                            else value)
        x = x.numpy()
    if isinstance(x, np.ndarray) and x.dtype.kind in "USO":
        return x
    if isinstance(x, (np.ndarray, np.generic)):
        return keras.ops.convert_to_tensor(x)
    return x  # already a backend tensor


def _decoded(value):
    if isinstance(value, bytes):
        return value.decode("utf-8", errors="replace")
    if isinstance(value, list):
        return [_decoded(v) for v in value]
    return value
