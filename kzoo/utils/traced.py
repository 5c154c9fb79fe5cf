"""One `tf.function` per (object, method), kept for the object's life;
or one shared by interchangeable objects (`shared_traced_method`).

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

# owner -> {method: tf.function}
_FUNCTIONS = weakref.WeakKeyDictionary()
# owner -> {key: ([latest caller, weakly], tf.function)}
_SHARED = weakref.WeakKeyDictionary()


def traced_method(owner, method, **function_kwargs):
    """`owner.<method>` as a `tf.function` (keyword arguments go to
    `tf.function`), made on first use and reused after; one per number of
    arguments it is called with."""
    functions = _FUNCTIONS.setdefault(owner, {})
    if method not in functions:
        instance = weakref.ref(owner)

        def run(*args):
            return getattr(instance(), method)(*args)
        functions[method] = _per_arity(run, function_kwargs)
    return functions[method]


def _per_arity(run, function_kwargs):
    """`run` as one `tf.function` per number of positional arguments.

    A preprocessor's graph is called with texts alone (`predict`), or
    with texts and labels (`fit`). TensorFlow's `reduce_retracing` fails
    inside its own signature matching (an IndexError, checked on
    TensorFlow 2.21) when one `tf.function` meets a call with more
    arguments than an earlier one: `predict` on more than 1,024 texts
    then `fit` on them with labels crashed.
    """
    functions = {}

    def call(*args):
        if len(args) not in functions:
            functions[len(args)] = tf.function(run, autograph=False,
                                               **function_kwargs)
        return functions[len(args)](*args)
    return call


def shared_traced_method(owner, key, caller, method, **function_kwargs):
    """`caller.<method>` as a `tf.function` shared by every caller that
    gives the same `owner` and `key` (keyword arguments go to
    `tf.function`).

    For objects that are interchangeable for `method`: its graph must
    depend on nothing but what `owner` and `key` stand for (a tokenizer's
    graph on its keras-hub tokenizer, shared among equal asset files, and
    on its class). Then a second object built from the same files reuses
    the first one's trace. The function keeps the latest caller weakly,
    and traces with it when TensorFlow needs a new trace; no caller is
    kept alive by it.
    """
    functions = _SHARED.setdefault(owner, {})
    if key not in functions:
        latest = [None]

        def run(*args):
            return getattr(latest[0](), method)(*args)
        functions[key] = (latest, tf.function(run, autograph=False,
                                              **function_kwargs))
    latest, function = functions[key]
    latest[0] = weakref.ref(caller)
    return function
