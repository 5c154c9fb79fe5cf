"""Print a pip constraints file that pins every dependency to its floor.

Reads pyproject.toml and turns each `name>=X` of `[project] dependencies`
(plus the optional-dependency groups named with `--extra`) into `name==X`,
so that `pip install -c <file> -e .` installs the oldest releases kzoo
claims to support. `.ci/run` installs that into a second venv and runs a
smoke subset of the tests: a floor that is too low fails CI.

Every runtime dependency must have a `>=` floor; one without (or with a
floor written another way) is an error, so a new dependency cannot slip in
undeclared. Pins from `--pin NAME==VERSION` win over the floors (e.g. torch,
which is pinned to a CPU build on machines without a GPU).

Usage: python scripts/min_constraints.py [--extra jax] [--pin torch==2.13.0]
           [-o constraints.txt]
"""

import argparse
import re
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# name[extras] <specifiers> ; markers
_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(\[[^\]]*\])?\s*"
    r"(?P<spec>[^;]*?)\s*(;(?P<marker>.*))?$")


def _normalize(name):
    return re.sub(r"[-_.]+", "-", name).lower()


def floors(requirements, project_name):
    """`{normalized name: (name, floor)}` for a list of requirement strings.

    A self-reference (`kzoo[jax]`) is skipped; its groups must be named with
    `--extra` themselves.
    """
    result = {}
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement)
        if not match:
            raise SystemExit(f"min_constraints: cannot parse {requirement!r}")
        name = match["name"]
        if _normalize(name) == _normalize(project_name):
            continue
        specs = [s.strip() for s in match["spec"].split(",") if s.strip()]
        lower = [s[2:].strip() for s in specs if s.startswith(">=")]
        if len(lower) != 1:
            raise SystemExit(
                f"min_constraints: {requirement!r} needs exactly one `>=` "
                "floor (the oldest release kzoo is tested with).")
        result[_normalize(name)] = (name, lower[0])
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pyproject", default=ROOT / "pyproject.toml",
                        type=Path)
    parser.add_argument("--extra", action="append", default=[],
                        help="also pin this optional-dependency group")
    parser.add_argument("--pin", action="append", default=[],
                        help="NAME==VERSION, overriding a floor")
    parser.add_argument("-o", "--output", type=Path,
                        help="write here instead of stdout")
    args = parser.parse_args(argv)

    project = tomllib.loads(args.pyproject.read_text())["project"]
    requirements = list(project.get("dependencies", []))
    groups = project.get("optional-dependencies", {})
    for extra in args.extra:
        if extra not in groups:
            raise SystemExit(f"min_constraints: no extra named {extra!r}; "
                             f"pyproject has {sorted(groups)}")
        requirements += groups[extra]
    pinned = floors(requirements, project["name"])
    for pin in args.pin:
        name, sep, version = pin.partition("==")
        if not sep or not version:
            raise SystemExit(f"min_constraints: --pin wants NAME==VERSION, "
                             f"got {pin!r}")
        pinned[_normalize(name)] = (name.strip(), version.strip())

    lines = [f"# Floors of {args.pyproject.name}, pinned "
             "(scripts/min_constraints.py)."]
    lines += [f"{name}=={version}" for name, version in
              (pinned[key] for key in sorted(pinned))]
    text = "\n".join(lines) + "\n"
    if args.output:
        args.output.write_text(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
