"""kzoo's import arrows point one way (/work/shared/DESIGN.md, "Layout"):
no cycle between its subpackages, and `kzoo.models` / `kzoo.presets`
never import `kzoo.convert` (conversion registers itself with presets).

The graph comes from the source (an AST walk over kzoo/), so imports
inside functions count as much as those at the top of a module: a
function-local import is still an arrow, only a later one.
"""

import ast
from pathlib import Path

import pytest

import kzoo

PACKAGE = Path(kzoo.__file__).resolve().parent


def _module_name(path):
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _is_module(name):
    """True when `name` (kzoo.x.y) is a module or package of kzoo."""
    relative = Path(*name.split(".")[1:]) if "." in name else Path()
    return ((PACKAGE / relative).with_suffix(".py").is_file()
            or (PACKAGE / relative / "__init__.py").is_file())


def _imports(path, module=None):
    """Every kzoo module `path` imports, wherever the import statement is,
    with its line number."""
    module = module or _module_name(path)
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
                if candidate.startswith("kzoo.") and _is_module(candidate):
                    yield candidate, node.lineno
                else:
                    yield target, node.lineno


def _unit(module):
    """The node of the graph: `kzoo.<first part>` (a subpackage, or a
    top-level module such as kzoo.presets); `kzoo` is the facade."""
    parts = module.split(".")
    return ".".join(parts[:2])


def import_graph():
    """{unit: {unit: [(file, line), ...]}} over kzoo's modules."""
    graph = {}
    for path in sorted(PACKAGE.rglob("*.py")):
        source = _unit(_module_name(path))
        for target, line in _imports(path):
            if target != "kzoo" and not target.startswith("kzoo."):
                continue
            target = _unit(target)
            if target == source:
                continue
            where = f"{path.relative_to(PACKAGE.parent)}:{line}"
            graph.setdefault(source, {}).setdefault(target, []).append(where)
    return graph


def _reachable(graph, start):
    seen, stack = set(), [start]
    while stack:
        node = stack.pop()
        for target in graph.get(node, {}):
            if target not in seen:
                seen.add(target)
                stack.append(target)
    return seen


def _cycles(graph, skip=("kzoo",)):
    """One cycle through each unit that lies on one, as a list of units.

    The `kzoo` facade is left out: it imports every part (that is its
    job), so any part that reads something off it (kzoo.convert.api reads
    `kzoo.__version__` when it writes a checkpoint) closes a loop through
    it. That is harmless after start-up; models and presets are held to
    more below (they may not import the facade at all)."""
    cycles = []
    for start in sorted(graph):
        if start in skip:
            continue
        # Depth-first search for a path back to `start`.
        stack = [(start, [start])]
        seen = set()
        while stack:
            node, path = stack.pop()
            for target in sorted(graph.get(node, {})):
                if target in skip:
                    continue
                if target == start:
                    cycles.append(path + [start])
                    stack = []
                    break
                if target not in seen:
                    seen.add(target)
                    stack.append((target, path + [target]))
    return cycles


def _describe(graph, cycle):
    return "\n".join(
        f"  {a} -> {b} ({', '.join(graph[a][b][:3])})"
        for a, b in zip(cycle, cycle[1:]))


def test_the_graph_sees_every_kind_of_import(tmp_path):
    source = tmp_path / "example.py"
    source.write_text(
        "import kzoo\n"
        "from kzoo import presets\n"
        "from . import api\n"
        "from ..models import backbone\n"
        "def later():\n"
        "    from kzoo.core.registry import get_class\n"
        "    import kzoo.layers.attention\n")
    found = sorted(_unit(target) for target, _ in
                   _imports(source, module="kzoo.convert.example"))
    assert found == ["kzoo", "kzoo.convert", "kzoo.layers", "kzoo.models",
                     "kzoo.models", "kzoo.presets"]
    assert "kzoo.presets" in import_graph()["kzoo.convert"]


def test_no_cycle_between_subpackages():
    graph = import_graph()
    cycles = _cycles(graph)
    assert not cycles, "import cycles between kzoo's parts:\n" + "\n\n".join(
        _describe(graph, cycle) for cycle in cycles)


@pytest.mark.parametrize("unit", ["kzoo.models", "kzoo.presets"])
def test_models_and_presets_never_reach_convert(unit):
    """Not directly, not through another part, and not through the `kzoo`
    facade (which imports kzoo.convert)."""
    graph = import_graph()
    reachable = _reachable(graph, unit)
    assert "kzoo.convert" not in reachable, (
        f"{unit} reaches kzoo.convert: "
        + "; ".join(f"{a} -> {b} at {graph[a][b][0]}"
                    for a in sorted(graph) for b in graph[a]
                    if b == "kzoo.convert" and (a == unit or a in reachable)))
    assert "kzoo" not in reachable, (
        f"{unit} imports the kzoo facade, which imports everything: "
        + ", ".join(w for a in sorted(graph) for b, ws in graph[a].items()
                    if b == "kzoo" and (a == unit or a in reachable)
                    for w in ws))
