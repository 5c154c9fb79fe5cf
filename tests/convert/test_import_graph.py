"""kzoo's import arrows point one way (docs/design.md, "Layout"; the same
rules in CONTRIBUTING.md):

    utils -> layers, preprocessing, training, metrics, distribution,
             generation, presets, datasets -> core -> tasks, convert
          -> models -> recipes -> the kzoo facade -> cli

- a part imports only parts below it (`RANKS`);
- no module imports a family (`kzoo.models.<family>`) except that family's
  own modules and the families that declare they build on it
  (`BUILDS_ON = ("bert",)` in their package's `__init__.py`);
- no circle of imports between any two modules of kzoo.

The graph comes from the source (an AST walk over kzoo/), so imports
inside functions count as much as those at the top of a module: a
function-local import is still an arrow, only a later one.
"""

import ast
from pathlib import Path

import pytest

import kzoo

pytestmark = pytest.mark.once

PACKAGE = Path(kzoo.__file__).resolve().parent

# Each part's height: an arrow must point to a lower one.
RANKS = {
    "kzoo.utils": 0, "kzoo.version": 0,
    "kzoo.presets": 1, "kzoo.layers": 1, "kzoo.preprocessing": 1,
    "kzoo.training": 1, "kzoo.metrics": 1, "kzoo.distribution": 1,
    "kzoo.datasets": 1,
    "kzoo.generation": 2,  # its decoding loops run kzoo.layers' caches
    "kzoo.core": 3,
    "kzoo.tasks": 4,
    "kzoo.corpus": 4,  # tokenized corpora: core's tokenizers, no model
    # checkpoint machinery every family's converter (kzoo/models/<family>/
    # convert.py) builds on; it finds a family's converter through
    # kzoo.core.families' static list, never an import statement
    "kzoo.convert": 4,
    "kzoo.models": 5,  # every kzoo.models.<family>
    "kzoo.recipes": 6,
    "kzoo.pretraining": 6,  # streams objectives from kzoo.corpus
    # trains a family's vocabulary: families' tokenizers, kzoo.corpus' text
    "kzoo.tokenizer_training": 6,
    "kzoo": 7,  # the facade: imports every public name
    "kzoo.cli": 8,
}


def _module_name(path, package=PACKAGE):
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name, package=PACKAGE):
    """True when `name` (kzoo.x.y) is a module or package of kzoo."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    return ((package / relative).with_suffix(".py").is_file()
            or (package / relative / "__init__.py").is_file())


def _imports(path, module=None, package=PACKAGE):
    """Every kzoo module `path` imports, wherever the import statement is,
    with its line number."""
    module = module or _module_name(path, package)
    is_package = path.name == "__init__.py"
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                yield alias.name, node.lineno
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = module.split(".")
                base = base[:len(base) - node.level + (1 if is_package else 0)]
                target = ".".join(base + ([node.module] if node.module
                                          else []))
            else:
                target = node.module or ""
            # `from kzoo import convert` imports kzoo.convert.
            for alias in node.names:
                candidate = f"{target}.{alias.name}"
                if candidate.startswith("kzoo.") and _is_module(candidate,
                                                                package):
                    yield candidate, node.lineno
                else:
                    yield target, node.lineno


def _family(module):
    """`bert` for kzoo.models.bert and its modules; None elsewhere."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "models" else None


def _unit(module):
    """The node of the layer graph: `kzoo.<first part>` (a subpackage, or
    a top-level module such as kzoo.presets), a family
    (`kzoo.models.bert`), or `kzoo`, the facade."""
    parts = module.split(".")
    return ".".join(parts[:3] if _family(module) else parts[:2])


def _rank(unit):
    return RANKS[_unit(unit) if not _family(unit) else "kzoo.models"]


def module_graph(package=PACKAGE):
    """{module: {imported kzoo module: [(file, line), ...]}}."""
    graph = {}
    for path in sorted(package.rglob("*.py")):
        source = _module_name(path, package)
        graph.setdefault(source, {})
        for target, line in _imports(path, source, package):
            if target != "kzoo" and not target.startswith("kzoo."):
                continue
            if target == source:
                continue
            where = f"{path.relative_to(package.parent)}:{line}"
            graph[source].setdefault(target, []).append(where)
    return graph


def unit_graph(modules):
    """The module graph folded onto units (see `_unit`)."""
    graph = {}
    for source, targets in modules.items():
        for target, places in targets.items():
            a, b = _unit(source), _unit(target)
            if a != b:
                graph.setdefault(a, {}).setdefault(b, []).extend(places)
    return graph


def declared_bases(package=PACKAGE):
    """{family: families its `__init__.py` says it builds on
    (`BUILDS_ON = (...)`)}."""
    declared = {}
    for init in sorted((package / "models").glob("*/__init__.py")):
        tree = ast.parse(init.read_text(encoding="utf-8"))
        bases = ()
        for node in tree.body:
            if isinstance(node, ast.Assign) and any(
                    getattr(t, "id", None) == "BUILDS_ON"
                    for t in node.targets):
                bases = tuple(ast.literal_eval(node.value))
        declared[init.parent.name] = bases
    return declared


def layer_violations(units):
    """Arrows that point up, or sideways between two parts of a rank."""
    return [f"{a} -> {b} ({', '.join(places[:3])})"
            for a, targets in sorted(units.items())
            for b, places in sorted(targets.items())
            if _rank(b) >= _rank(a) and not (_family(a) and _family(b))]


def family_violations(units, declared):
    """Arrows into a family from outside it that its importer did not
    declare (`BUILDS_ON`); the declared bases' own bases count too."""
    def bases(family, seen=()):
        found = set(declared.get(family, ()))
        for base in declared.get(family, ()):
            if base not in seen:
                found |= bases(base, seen + (family,))
        return found

    problems = []
    for a, targets in sorted(units.items()):
        for b, places in sorted(targets.items()):
            if not _family(b):
                continue
            if _family(a) and _family(b) in bases(_family(a)):
                continue
            if _rank(a) > RANKS["kzoo.models"]:
                continue  # recipes, the facade and cli sit above
            problems.append(f"{a} -> {b} ({', '.join(places[:3])})")
    return problems


def cycles(graph):
    """Each strongly connected group of more than one module (Tarjan's
    algorithm), as a sorted list of modules."""
    index, low, on_stack, stack, groups = {}, {}, set(), [], []

    def visit(node):
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, {}):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            group = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                group.append(member)
                if member == node:
                    break
            if len(group) > 1:
                groups.append(sorted(group))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return groups


def _describe_cycle(graph, group):
    members = set(group)
    return "\n".join(f"  {a} -> {b} ({', '.join(places[:2])})"
                     for a in group
                     for b, places in sorted(graph.get(a, {}).items())
                     if b in members)


# ----------------------------------------------------------------------
# The checker checks: a small package with each kind of fault.
# ----------------------------------------------------------------------
def _write(root, files):
    for name, text in files.items():
        path = root / "kzoo" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root / "kzoo"


def test_the_graph_sees_every_kind_of_import(tmp_path):
    package = _write(tmp_path, {
        "__init__.py": "",
        "presets.py": "",
        "convert/__init__.py": "",
        "convert/api.py": "",
        "convert/example.py":
            "import kzoo\n"
            "from kzoo import presets\n"
            "from . import api\n"
            "from ..core import backbone\n"
            "def later():\n"
            "    from kzoo.core.registry import get_class\n"
            "    import kzoo.layers.attention\n",
    })
    found = sorted(target for target, _ in _imports(
        package / "convert/example.py", "kzoo.convert.example", package))
    assert found == ["kzoo", "kzoo.convert.api", "kzoo.core",
                     "kzoo.core.registry", "kzoo.layers.attention",
                     "kzoo.presets"]


def test_the_rules_catch_each_kind_of_fault(tmp_path):
    package = _write(tmp_path, {
        "__init__.py": "",
        "core/__init__.py": "",
        "core/a.py": "def f():\n    from kzoo.core import b\n",
        "core/b.py": "from kzoo.core import a\n",
        "core/up.py": "from kzoo.tasks import head\n",
        "tasks/__init__.py": "",
        "tasks/head.py": "from kzoo.models.bert import backbone\n",
        "models/__init__.py": "",
        "models/bert/__init__.py": "",
        "models/bert/backbone.py": "",
        "models/roberta/__init__.py": 'BUILDS_ON = ("bert",)\n',
        "models/roberta/backbone.py": "from kzoo.models.bert import backbone\n",
        "models/gpt2/__init__.py": "",
        "models/gpt2/backbone.py": "from kzoo.models.bert import backbone\n",
    })
    modules = module_graph(package)
    units = unit_graph(modules)
    assert cycles(modules) == [["kzoo.core.a", "kzoo.core.b"]]
    assert [v.split(" (")[0] for v in layer_violations(units)] == [
        "kzoo.core -> kzoo.tasks", "kzoo.tasks -> kzoo.models.bert"]
    assert [v.split(" (")[0] for v in family_violations(
        units, declared_bases(package))] == [
        "kzoo.models.gpt2 -> kzoo.models.bert",
        "kzoo.tasks -> kzoo.models.bert"]


# ----------------------------------------------------------------------
# kzoo itself.
# ----------------------------------------------------------------------
def test_every_part_has_a_rank():
    units = {_unit(m) for m in module_graph()}
    unranked = sorted(u for u in units
                      if not _family(u) and u not in RANKS)
    assert not unranked, (
        f"parts with no place in the layers: {unranked}; add each to "
        "RANKS here and to the layout in docs/design.md")


def test_arrows_point_down():
    problems = layer_violations(unit_graph(module_graph()))
    assert not problems, "imports that point up the layers:\n  " + \
        "\n  ".join(problems)


def test_only_declared_families_import_a_family():
    declared = declared_bases()
    units = unit_graph(module_graph())
    problems = family_violations(units, declared)
    assert not problems, (
        "imports of a family from outside it (move the shared piece to "
        "kzoo/core, kzoo/tasks, kzoo/layers or kzoo/preprocessing, or "
        "declare BUILDS_ON in the importing family's __init__.py when its "
        "classes subclass the other's):\n  " + "\n  ".join(problems))
    unknown = {f: [b for b in bases if b not in declared]
               for f, bases in declared.items()}
    assert not any(unknown.values()), f"BUILDS_ON names no family: {unknown}"


def test_no_import_circle_between_modules():
    graph = module_graph()
    found = cycles(graph)
    assert not found, "import circles in kzoo:\n\n" + "\n\n".join(
        _describe_cycle(graph, group) for group in found)


@pytest.mark.parametrize("unit", ["kzoo.core", "kzoo.tasks", "kzoo.presets"])
def test_the_lower_parts_never_reach_convert_or_the_facade(unit):
    """Not directly, and not through another part."""
    graph = unit_graph(module_graph())
    seen, stack = set(), [unit]
    while stack:
        for target in graph.get(stack.pop(), {}):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    assert "kzoo.convert" not in seen and "kzoo" not in seen, sorted(seen)
