"""kzoo's public API as the documentation sees it: the public modules, the
names each exports, and the ```python examples in their docstrings.

Shared by tests/test_docs.py (the site covers every public name; every
example runs) and nothing else; the API pages themselves are docs/api/*.md.
"""

import importlib
import inspect
import re

# The modules whose exports are the public API. A module with `__all__`
# exports exactly that; `kzoo` itself, every kzoo class and function it
# imports; any other module, the public classes and functions it defines
# under their own names (not its imports, nor `presets.list`, an alias).
PUBLIC_MODULES = (
    "kzoo", "kzoo.tasks", "kzoo.training", "kzoo.metrics", "kzoo.preprocessing",
    "kzoo.generation", "kzoo.distribution", "kzoo.datasets", "kzoo.convert",
    "kzoo.presets", "kzoo.recipes.ulmfit",
)

_FENCE = re.compile(r"^[ \t]*```python[ \t]*\n(.*?)^[ \t]*```[ \t]*$",
                    re.DOTALL | re.MULTILINE)


def _exported(module):
    if hasattr(module, "__all__"):
        return list(module.__all__)
    names = []
    for name, obj in vars(module).items():
        if name.startswith("_") or inspect.ismodule(obj):
            continue
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        defined_in = getattr(obj, "__module__", "") or ""
        if module.__name__ == "kzoo":
            if defined_in.startswith("kzoo."):
                names.append(name)
        elif defined_in == module.__name__ and obj.__name__ == name:
            names.append(name)
    return names


def public_objects():
    """`(qualified name, object)` for every public class and function, in
    module order; constants (e.g. `kzoo.distribution.ROW`) are left out:
    they have no docstring of their own."""
    for module_name in PUBLIC_MODULES:
        module = importlib.import_module(module_name)
        for name in _exported(module):
            obj = getattr(module, name)
            if inspect.isclass(obj) or inspect.isfunction(obj):
                yield f"{module_name}.{name}", obj


# An example that continues another's starts with this line: the setup a
# module's examples share is written once (in the module docstring or the
# main class's example) and the others name it.
_SETUP = re.compile(r"# Setup: the example of `?([A-Za-z_][\w.]*\w)`?")


def examples(obj):
    """The ```python blocks of `obj`'s own docstring, dedented; a block
    that starts `# Setup: the example of <name>` follows that object's
    first example, as it runs."""
    doc = inspect.getdoc(obj) if obj.__doc__ else ""
    return [_after_setup(inspect.cleandoc("\n" + block)
                         if block.startswith(" ") else block)
            for block in _FENCE.findall(doc or "")]


def _after_setup(block):
    match = _SETUP.match(block)
    if not match:
        return block
    setup = examples(_named(match.group(1)))
    if not setup:
        raise ValueError(f"{match.group(0)!r}: it has no ```python example")
    return setup[0] + "\n" + block


def _named(path):
    """The module, class or function a dotted name names."""
    parts = path.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for part in parts[i:]:
            obj = getattr(obj, part)
        return obj
    raise ValueError(f"{path!r} names nothing importable")
