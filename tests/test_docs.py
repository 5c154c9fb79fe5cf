"""The documentation: the site builds in strict mode (a broken link, an
unparseable docstring section or a missing page fails), it documents every
public name, and the ```python examples in the docstrings run, offline.

The examples run on the backend under test, each in a fresh namespace
holding `kzoo`, `np` and `keras`, from an empty working directory.
"""

import os
import subprocess
import sys
from pathlib import Path

import keras
import numpy as np
import pytest

import kzoo
from docs_public import PUBLIC_MODULES, examples, public_objects

ROOT = Path(__file__).resolve().parent.parent
API_DIR = ROOT / "docs" / "api"

PUBLIC = list(public_objects())
WITH_EXAMPLES = [(name, obj) for name, obj in PUBLIC if examples(obj)]

def _api_references():
    """The `::: name` lines of the API pages."""
    names = set()
    for page in API_DIR.rglob("*.md"):
        for line in page.read_text(encoding="utf-8").splitlines():
            if line.startswith("::: "):
                names.add(line[4:].strip())
    return names


@pytest.mark.once
def test_site_builds_in_strict_mode(tmp_path):
    # mkdocs comes with the `docs` extra (in `dev`).
    site = tmp_path / "site"
    result = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-q",
         "-d", str(site)],
        cwd=ROOT, capture_output=True, text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)}, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    # Each public name is rendered (mkdocstrings anchors it by its path),
    # and each guide became a page.
    html = "".join(p.read_text(encoding="utf-8")
                   for p in (site / "api").rglob("index.html"))
    unrendered = [name for name, _ in PUBLIC if f'id="{name}"' not in html]
    assert not unrendered, unrendered
    for guide in (ROOT / "guides").glob("*.py"):
        page = site / "guides" / guide.stem / "index.html"
        assert page.is_file(), page
    # The pages docs/site_hook.py makes: the CLI reference, the
    # changelog, and a model card per named preset on its family's page.
    assert "kzoo fill-mask" in (site / "cli" / "index.html").read_text(
        encoding="utf-8")
    assert (site / "changelog" / "index.html").is_file()
    families = "".join(p.read_text(encoding="utf-8")
                       for p in (site / "families").rglob("index.html"))
    uncarded = [p.name for p in (ROOT / "presets").iterdir()
                if f"<code>{p.name}</code>" not in families]
    assert not uncarded, uncarded


@pytest.mark.once
def test_api_reference_lists_every_public_name():
    documented = _api_references()
    missing = sorted(name for name, _ in PUBLIC if name not in documented)
    assert not missing, (
        f"add a `::: name` line to a page in docs/api/ for {missing}")
    # A public module may be named too: its docstring (ULMFiT's recipe)
    # heads its page.
    public = {name for name, _ in PUBLIC} | set(PUBLIC_MODULES)
    stale = sorted(documented - public)
    assert not stale, f"docs/api/ names what is not public: {stale}"


@pytest.mark.once
def test_every_public_name_has_a_docstring():
    undocumented = [name for name, obj in PUBLIC
                    if not (obj.__doc__ or "").strip()]
    assert not undocumented, undocumented


@pytest.mark.once
def test_examples_cover_every_public_name():
    # Every public name shows its use in an example that runs offline
    # (test_docstring_examples_run): a model without shipped weights or
    # tokenizer files builds a small random one and its tokenizer's files.
    without = sorted(name for name, obj in PUBLIC if not examples(obj))
    assert not without, f"no ```python example in the docstring: {without}"


# The examples run on one backend: the torch pass, where the models'
# first calls are quickest (no graph tracing or XLA compile).
@pytest.mark.skipif(keras.backend.backend() != "torch",
                    reason="the docstring examples run in the torch pass")
@pytest.mark.parametrize(
    "name,obj", [pytest.param(n, o, id=n) for n, o in WITH_EXAMPLES])
def test_docstring_examples_run(name, obj, tmp_path, monkeypatch):
    # No network: an example that needs a download fails here as it would
    # for a user offline.
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.chdir(tmp_path)
    # Hooks an example registers (a weight source, a reference resolver)
    # end with it: left behind, they answered later tests in the same
    # worker (a "my_preset" weight source found another test's folder).
    from kzoo import presets
    for registry in ("_REFERENCE_RESOLVERS", "_WEIGHT_SOURCES"):
        monkeypatch.setattr(presets, registry,
                            dict(getattr(presets, registry)))
    for i, source in enumerate(examples(obj)):
        code = compile(source, f"<{name} example {i}>", "exec")
        exec(code, {"kzoo": kzoo, "np": np, "keras": keras,
                    "__name__": f"example_{i}"})
