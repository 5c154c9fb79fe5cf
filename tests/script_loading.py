"""Load a repository script (scripts/*.py, docs/site_hook.py) as a module,
so that a test calls its functions: the scripts are not a package."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def load_script(path):
    """The module in `path` (absolute, or relative to the repository
    root), run once, named after the file."""
    path = ROOT / path
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module
