"""Building a model whose weights a file is about to overwrite, without
drawing random initial values for them.

Keras draws every variable's initial value when the variable is created:
for BERT-base, 110M truncated-normal draws, most of `from_preset`'s time
(torch: ~15 of 20 s; jax and tensorflow: several seconds), all of it
thrown away by the load that follows. Inside `initial_values_skipped()`,
floating-point variables start as zeros instead; integer variables (the
seed states of dropout and random layers) keep their initialisers, so
randomness after loading is what it would have been.

Keras has no public hook for this (a stateless scope defers creation, but
its variables cannot then be loaded into), so the one private method that
turns an initializer into a value, `_initialize_with_initializer` of the
backend's `keras.Variable` class, is wrapped once, on first use, to hand
the backend a `Zeros` initializer instead. The switch is per thread: a
model built with random weights in another thread at the same time is
unaffected. If a Keras release drops the method, loading falls back to
drawing the values (slower, same result).

Use it only where every weight is loaded next: `Backbone.from_preset`
checks the file holds a tensor for each weight before loading it.
"""

import contextlib
import threading

import keras

_switch = threading.local()
_install_lock = threading.Lock()
_installed = False


def _install():
    global _installed
    with _install_lock:
        if _installed:
            return True
        # The backend's own class (tensorflow's overrides the method).
        variable_cls = keras.Variable
        original = getattr(variable_cls, "_initialize_with_initializer",
                           None)
        if original is None:
            return False
        zeros = keras.initializers.Zeros()

        def initialize(variable, initializer):
            # The backend's own path, with zeros for the draws.
            if getattr(_switch, "active", False) and \
                    "float" in str(variable.dtype):
                initializer = zeros
            original(variable, initializer)

        variable_cls._initialize_with_initializer = initialize
        _installed = True
        return True


@contextlib.contextmanager
def initial_values_skipped():
    """Float variables created in this block (in this thread) start as
    zeros rather than random draws."""
    if not _install():
        yield
        return
    previous = getattr(_switch, "active", False)
    _switch.active = True
    try:
        yield
    finally:
        _switch.active = previous
