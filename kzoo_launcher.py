"""The `kzoo` console script's entry point (pyproject.toml's
`[project.scripts]`), outside the `kzoo` package on purpose.

`import kzoo.cli` runs `kzoo/__init__.py` first, which imports every family,
Keras and the backends: 8-12 s before a word of `kzoo --help` could print.
So this module puts the `kzoo` package in `sys.modules` without running
its `__init__.py`, lets `kzoo.cli` (argparse and the standard library only)
build the parser and read the arguments, and runs `kzoo/__init__.py` only
once a command is about to run: `--help`, `--version` and a usage error
never import Keras. The command then runs exactly as under `import kzoo`
(every family imported and registered).

Not for import by anything else: library code imports `kzoo` as usual.
"""

import importlib.util
import sys


def _defer_package():
    """`kzoo` in sys.modules, its `__init__.py` not run yet; the function
    that runs it (a no-op when kzoo was already imported)."""
    if "kzoo" in sys.modules:
        return lambda: None
    spec = importlib.util.find_spec("kzoo")
    module = importlib.util.module_from_spec(spec)
    sys.modules["kzoo"] = module
    done = []

    def finish():
        if not done:
            done.append(True)
            try:
                spec.loader.exec_module(module)
            except BaseException:
                # Leave no half-made package behind (a later import
                # would see a module without its names).
                sys.modules.pop("kzoo", None)
                raise
    return finish


def main(argv=None):
    finish_import = _defer_package()
    from kzoo.cli import main as cli_main
    return cli_main(argv, finish_import=finish_import)


if __name__ == "__main__":
    sys.exit(main())
