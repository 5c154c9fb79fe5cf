"""Load a repository script (scripts/*.py, docs/site_hook.py) as a module,
so that a test calls its functions: the scripts are not a package."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(path, name=None):
    """The module in `path` (absolute, or relative to the repository
    root), run once, under `name` (default: the file's stem)."""
    path = ROOT / path
    spec = importlib.util.spec_from_file_location(name or path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
