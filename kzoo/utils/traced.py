"""One `tf.function` per (object, method), kept for the object's life.

tf.data traces the function of every `dataset.map` anew, and each `fit`,
`evaluate` and `predict` on raw text builds a new pipeline: for byte-level
BPE that rebuilt thousands of graph ops (seconds) every time. Calling a
`tf.function` kept here instead adds one call to a graph traced once.

The functions live in a table keyed weakly by their object, not among its
attributes: TensorFlow tracks a `tf.function` found on a layer (and would
try to save it), and the function must not keep its object alive.
"""

import weakref

import tensorflow as tf

_FUNCTIONS = weakref.WeakKeyDictionary()


def traced_method(owner, method, **function_kwargs):
    """`owner.<method>` as a `tf.function` (keyword arguments go to
    `tf.function`), made on first use and reused after."""
    functions = _FUNCTIONS.setdefault(owner, {})
    if method not in functions:
        instance = weakref.ref(owner)

        def run(*args):
            return getattr(instance(), method)(*args)
        functions[method] = tf.function(run, autograph=False,
                                        **function_kwargs)
    return functions[method]


def forget_traces(owner):
    """Drop `owner`'s traced functions (its graphs captured what changed)."""
    _FUNCTIONS.pop(owner, None)
