"""Constructor arguments checked against a declared spec, before any work.

A class declares what each of its constructor arguments must be:

    class BertBackbone(Backbone):
        argument_spec = {**TRANSFORMER_ARGUMENTS,
                         "num_segments": POSITIVE_INT}
        argument_rules = TRANSFORMER_RULES  # hidden_dim % num_heads == 0

and its base class (`Backbone`) wraps every subclass `__init__` with
`checked_init`, which binds the call to the signature (defaults filled in)
and checks it once, for the class being built (the outermost `__init__`),
before a single layer exists:

- every declared argument against its constraint;
- every rule that spans arguments (`hidden_dim` divisible by `num_heads`);
- no keyword the signature does not know (a typo such as `hiden_dim` in a
  config would otherwise vanish into Keras' `**kwargs`), and none missing.

A failure is an `ArgumentError` that names the class, the argument, the
value and what to do. While a preset's `config.json` is being built,
`from_preset` says so with `config_source(...)`, and messages about values
that came from that file name it.

The constraints also list values that break them (`bad_examples`), so the
tests derive their bad-input cases from each class's own spec.
"""

import contextvars
import difflib
import functools
import inspect
import math
import numbers

import numpy as np


class ArgumentError(ValueError):
    """A constructor argument (or config value) that cannot be used."""


# Keyword arguments every Keras model takes besides its own.
KERAS_KEYWORDS = ("name", "trainable", "dtype")


# ----------------------------------------------------------------------
# Constraints: one value each
# ----------------------------------------------------------------------
class Constraint:
    """What one argument must be.

    `expected` completes "num_layers must be ..."; `accepts(value)` says
    whether `value` is fine; `bad_examples` are values it refuses.
    """

    expected = ""
    bad_examples = ()

    def accepts(self, value):
        raise NotImplementedError

    def failure(self, name, value):
        """The message for `name=value`, which `accepts` refused."""
        return f"{name} must be {self.expected}; got {describe(value)}"

    def hint(self, value):
        """What to do, beyond the expectation (e.g. a close name)."""
        return ""

    def __repr__(self):
        return f"<{self.expected}>"


def _is_integer(value):
    return isinstance(value, (numbers.Integral, np.integer)) and \
        not isinstance(value, (bool, np.bool_))


def _is_real(value):
    return isinstance(value, (numbers.Real, np.floating, np.integer)) and \
        not isinstance(value, (bool, np.bool_))


class Integer(Constraint):
    """An integer (not a bool, not a float such as 2.0) >= `minimum`."""

    def __init__(self, minimum=1):
        self.minimum = minimum
        self.expected = ("a positive integer" if minimum == 1 else
                         "a non-negative integer" if minimum == 0 else
                         f"an integer >= {minimum}")
        self.bad_examples = (minimum - 1, -2, 2.5, True, "2")

    def accepts(self, value):
        return _is_integer(value) and value >= self.minimum


class Real(Constraint):
    """A finite real number in a range (either end open or closed)."""

    def __init__(self, low=None, high=None, low_open=False, high_open=False,
                 expected=None):
        self.low, self.high = low, high
        self.low_open, self.high_open = low_open, high_open
        self.expected = expected or self._describe()
        bad = [float("nan"), float("inf"), "0.1", None]
        if low is not None:
            bad.insert(0, low if low_open else low - 1.0)
        if high is not None:
            bad.insert(1, high if high_open else high + 1.0)
        self.bad_examples = tuple(bad)

    def _describe(self):
        left = "(" if self.low_open else "["
        right = ")" if self.high_open else "]"
        low = "-inf" if self.low is None else f"{self.low:g}"
        high = "inf" if self.high is None else f"{self.high:g}"
        return f"a finite number in {left}{low}, {high}{right}"

    def accepts(self, value):
        if not _is_real(value) or not math.isfinite(float(value)):
            return False
        value = float(value)
        if self.low is not None and (value < self.low or (
                self.low_open and value == self.low)):
            return False
        if self.high is not None and (value > self.high or (
                self.high_open and value == self.high)):
            return False
        return True


class OneOf(Constraint):
    """One of a fixed set of values (names, usually)."""

    def __init__(self, choices, noun=None):
        self._choices = choices
        self.noun = noun  # "activation": "Unknown activation 'gleu'"

    @property
    def choices(self):
        # A callable is read on use: registries may grow after import.
        choices = self._choices() if callable(self._choices) else \
            self._choices
        return tuple(choices)

    @property
    def expected(self):
        return "one of " + ", ".join(map(repr, self.choices))

    @property
    def bad_examples(self):
        return ("no_such_" + str(self.choices[0]), None, 3)

    def accepts(self, value):
        try:
            return value in self.choices
        except TypeError:  # unhashable
            return False

    def failure(self, name, value):
        if self.noun and isinstance(value, str):
            return (f"Unknown {self.noun} {value!r}: {name} must be "
                    f"{self.expected}")
        return super().failure(name, value)

    def hint(self, value):
        if isinstance(value, str):
            close = difflib.get_close_matches(
                value, [str(c) for c in self.choices], n=2)
            if close:
                return f"Did you mean {' or '.join(map(repr, close))}?"
        return ""


class Optional(Constraint):
    """None, or what `inner` accepts."""

    def __init__(self, inner):
        self.inner = inner
        self.expected = f"None or {inner.expected}"
        self.bad_examples = tuple(v for v in inner.bad_examples
                                  if v is not None)

    def accepts(self, value):
        return value is None or self.inner.accepts(value)


class Boolean(Constraint):
    """True or False (not "yes", not 1: `bool("no")` is True)."""

    expected = "True or False"
    bad_examples = ("yes", 1, None)

    def accepts(self, value):
        return isinstance(value, (bool, np.bool_))


BOOLEAN = Boolean()
POSITIVE_INT = Integer(minimum=1)
NON_NEGATIVE_INT = Integer(minimum=0)
FRACTION = Real(0.0, 1.0, high_open=True,
                expected="a fraction in [0, 1) (a dropout rate)")
POSITIVE_FLOAT = Real(0.0, None, low_open=True,
                      expected="a positive, finite number")


def _activation_names():
    from kzoo.layers.activations import activation_names
    return activation_names()


ACTIVATION = OneOf(_activation_names, noun="activation")


# ----------------------------------------------------------------------
# Rules: several values at once
# ----------------------------------------------------------------------
class Divisible:
    """`dividend` must be a multiple of `divisor` (hidden_dim / num_heads)."""

    def __init__(self, dividend, divisor):
        self.dividend, self.divisor = dividend, divisor
        self.arguments = (dividend, divisor)

    def problem(self, values):
        a, b = values.get(self.dividend), values.get(self.divisor)
        if _is_integer(a) and _is_integer(b) and b > 0 and a % b:
            return (f"{self.dividend} ({a}) must be divisible by "
                    f"{self.divisor} ({b}); e.g. {self.dividend}="
                    f"{(a // b + 1) * b} or {self.divisor} one of "
                    f"{_divisors(a)}")
        return None

    def bad_example(self, values):
        """Overrides of `values` that break the rule."""
        b = values[self.divisor]
        return {self.dividend: values[self.dividend] // b * b + 1} \
            if b > 1 else {self.divisor: values[self.dividend] + 1}


def _divisors(n):
    return [d for d in range(1, min(n, 64) + 1) if n % d == 0]


# ----------------------------------------------------------------------
# Where the values came from
# ----------------------------------------------------------------------
_SOURCE = contextvars.ContextVar("kzoo_argument_source", default=None)


class config_source:
    """Values passed to constructors inside `with config_source(...):` came
    from `description` (e.g. "config.json of preset 'x', /path"); `keys`
    limits that to the arguments the file set (None: all of them), and
    `fix` says how to correct a value ("{argument}" is filled in; or a
    function of the argument's name). The object may be entered more than
    once."""

    def __init__(self, description, keys=None, fix=None):
        self.value = (description, None if keys is None else set(keys), fix)
        self._tokens = []

    def __enter__(self):
        self._tokens.append(_SOURCE.set(self.value))
        return self

    def __exit__(self, *exc):
        _SOURCE.reset(self._tokens.pop())


def _origin(argument_names):
    """` (from ...)` and what to do, for values from a declared source."""
    source = _SOURCE.get()
    if source is None:
        return "", None
    description, keys, fix = source
    if keys is not None and not set(argument_names) & keys:
        return "", None
    return f" (from {description})", fix


# ----------------------------------------------------------------------
# The check
# ----------------------------------------------------------------------
def describe(value, limit=60):
    text = repr(value)
    if len(text) > limit:
        text = text[:limit - 3] + "..."
    return f"{text} ({type(value).__name__})"


def _fail(cls, message, argument_names, hint="", file_fix=None):
    """Raise the ArgumentError: `hint` says what to do; for a value from a
    declared source, the source's fix (or `file_fix`) is added."""
    origin, fix = _origin(argument_names)
    if origin:
        fix = file_fix or fix
        argument = list(argument_names)[0]
        if callable(fix):
            fix = fix(argument)
        elif fix:
            fix = fix.format(argument=argument)
    what_to_do = " ".join(filter(None, [hint, fix if origin else None]))
    raise ArgumentError(f"{cls.__name__}: {message}{origin}."
                        + (f" {what_to_do}" if what_to_do else ""))


def bound_arguments(init, self, args, kwargs):
    """`{argument: value}` of a call of `init` (defaults filled in,
    `**kwargs` flattened), and the names of the `**kwargs` it got."""
    signature = inspect.signature(init)
    bound = signature.bind(self, *args, **kwargs)
    bound.apply_defaults()
    values, extra = {}, []
    for name, value in list(bound.arguments.items())[1:]:
        kind = signature.parameters[name].kind
        if kind is inspect.Parameter.VAR_KEYWORD:
            values.update(value)
            extra.extend(value)
        elif kind is not inspect.Parameter.VAR_POSITIONAL:
            values[name] = value
    return values, extra


def check_call(cls, init, self, args, kwargs):
    """Check one constructor call of `cls` against its declared spec."""
    parameters = inspect.signature(init).parameters
    known = list(parameters)[1:]
    # Unknown keywords first: `num_clases=3` is the cause of the missing
    # `num_classes`, and Keras' **kwargs would swallow `hiden_dim`.
    for name in kwargs:
        if name not in parameters and name not in KERAS_KEYWORDS:
            _unknown(cls, name, kwargs[name], known)
    try:
        values, _ = bound_arguments(init, self, args, kwargs)
    except TypeError as e:  # a required argument missing, too many given
        missing = [name for name, p in parameters.items()
                   if name != "self" and p.default is p.empty
                   and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY)
                   and name not in kwargs]
        _fail(cls, str(e), missing[len(args):] + known,
              f"Its arguments: {', '.join(_public(known))}.")
    check_spec(cls, values)
    for rule in getattr(cls, "argument_rules", ()) or ():
        problem = rule.problem(values)
        if problem:
            _fail(cls, problem, rule.arguments)
    # Checks that need the class itself (a task's backbone class, say).
    cls.check_argument_values(values)
    return values


def check_spec(cls, values):
    """Check `{argument: value}` against `cls.argument_spec` alone; classes
    that check their own arguments (preprocessors: Keras layers whose
    `__init__` the preprocessor base wraps) call it directly."""
    for name, constraint in (getattr(cls, "argument_spec", {}) or
                             {}).items():
        if name in values and not constraint.accepts(values[name]):
            _fail(cls, constraint.failure(name, values[name]), [name],
                  constraint.hint(values[name]))


def _unknown(cls, name, value, known):
    close = difflib.get_close_matches(name, _public(known), n=1)
    hint = f"Did you mean {close[0]!r}? " if close else ""
    _fail(cls, f"unknown argument {name!r} = {describe(value)}", [name],
          f"{hint}{cls.__name__} takes {', '.join(_public(known))}.",
          file_fix="Rename or remove it in that file.")


def _public(names):
    return [n for n in names if not n.startswith("_") and n not in (
        "args", "kwargs")]


def checked_init(init):
    """Wrap a subclass `__init__` so the class being built (the outermost
    `__init__`) checks its arguments before any of them is used."""

    @functools.wraps(init)
    def wrapper(self, *args, **kwargs):
        outermost = type(self).__init__ is wrapper
        if not outermost:
            return init(self, *args, **kwargs)
        values = check_call(type(self), init, self, args, kwargs)
        # NumPy scalars (a config read with NumPy) as Python numbers: Keras
        # layers refuse an np.int64 size, and config.json must be JSON.
        values = {name: value.item() if isinstance(value, np.generic)
                  else value for name, value in values.items()}
        init(self, **values)
        # The checked arguments, for classes whose config is exactly their
        # constructor's arguments (see Backbone.record_arguments).
        self.record_arguments(values)

    # Keras reads constructor arguments off the signature (for its
    # automatic configs); give it the real one, not (*args, **kwargs).
    wrapper.__signature__ = inspect.signature(init)
    wrapper.__kzoo_checked__ = True
    return wrapper


class CheckedArguments:
    """Mixin: every subclass that defines `__init__` gets it checked
    against its `argument_spec` and `argument_rules` (see the module doc).
    A spec entry for an argument the `__init__` does not take is ignored,
    so a base class may declare the names its families share."""

    argument_spec = {}
    argument_rules = ()

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        init = cls.__dict__.get("__init__")
        if init is not None and not getattr(init, "__kzoo_checked__", False):
            cls.__init__ = checked_init(init)

    @classmethod
    def check_argument_values(cls, values):
        """Checks beyond the declared spec, on `{argument: value}` (defaults
        filled in); raise `ArgumentError`. Runs before `__init__`."""

    def record_arguments(self, values):
        """Called after the outermost `__init__` with its checked
        `{argument: value}` (defaults filled in); a no-op unless a class
        keeps them."""

    @classmethod
    def check_config(cls, config):
        """Check `cls(**config)`'s arguments without building anything."""
        check_call(cls, cls.__init__, None, (), dict(config))


# Arguments most transformer backbones share, with what they must be.
TRANSFORMER_ARGUMENTS = {
    "vocabulary_size": POSITIVE_INT,
    "num_layers": POSITIVE_INT,
    "num_heads": POSITIVE_INT,
    "hidden_dim": POSITIVE_INT,
    "intermediate_dim": POSITIVE_INT,
    "dropout": FRACTION,
    "attention_dropout": FRACTION,
    "max_sequence_length": POSITIVE_INT,
    "activation": ACTIVATION,
    "layer_norm_epsilon": POSITIVE_FLOAT,
    "initializer_range": POSITIVE_FLOAT,
}
TRANSFORMER_RULES = (Divisible("hidden_dim", "num_heads"),)
