"""Class names in preset files map to kzoo classes through this registry.

Loading a preset only ever instantiates a registered class from JSON config:
no code in a preset is executed.
"""

import keras

_CLASSES = {}


def register(cls):
    """Class decorator: make `cls` loadable by name from preset files."""
    _CLASSES[cls.__name__] = cls
    return keras.saving.register_keras_serializable(package="kzoo")(cls)


def get_class(name, expected_base=None):
    try:
        cls = _CLASSES[name]
    except KeyError:
        raise ValueError(
            f"Unknown kzoo class {name!r} in a preset file. Known classes: "
            f"{', '.join(sorted(_CLASSES))}.") from None
    if expected_base is not None and not issubclass(cls, expected_base):
        raise ValueError(
            f"The preset holds a {name}, which is not a "
            f"{expected_base.__name__}.")
    return cls


def class_entry(obj, config):
    return {"class_name": type(obj).__name__, "config": config}


def registered_classes():
    """Every registered class, in registration order."""
    return list(_CLASSES.values())


def registered_subclasses(base):
    """The registered classes that subclass `base` (not `base` itself), in
    registration order."""
    return [cls for cls in _CLASSES.values()
            if issubclass(cls, base) and cls is not base]
