"""NOTICE names every third-party file kzoo bundles, and nothing else.

A bundled file is any file in presets/, kzoo/data/ or tests/data/ that
is not kzoo's own: the JSON a preset writer makes (config, metadata,
tokenizer, preprocessor, task, generation settings) and the READMEs that state provenance are kzoo's;
everything else (vocabularies, SentencePiece models, BPE merges,
corpora, fixtures) came from somewhere and carries a licence.
"""

from pathlib import Path

import pytest

pytestmark = pytest.mark.once

REPO = Path(__file__).resolve().parent.parent
BUNDLE_DIRS = ("presets", "kzoo/data", "tests/data")
KZOO_OWN = {"config.json", "metadata.json", "tokenizer.json",
            "preprocessor.json", "task.json", "generation.json"}


def _bundled():
    for folder in BUNDLE_DIRS:
        for path in sorted((REPO / folder).rglob("*")):
            if not path.is_file() or path.name in KZOO_OWN:
                continue
            if path.suffix == ".md":  # provenance notes, kzoo's own
                continue
            if "__pycache__" in path.parts:
                continue
            yield path.relative_to(REPO).as_posix()


def _listed():
    """The paths NOTICE lists (indented lines naming a file)."""
    text = (REPO / "NOTICE").read_text(encoding="utf-8")
    return {line.strip() for line in text.splitlines()
            if line.startswith("    ") and "/" in line}


def test_notice_lists_every_bundled_file():
    bundled = list(_bundled())
    assert any(p.endswith("vocab.txt") for p in bundled)  # the walk finds them
    missing = sorted(set(bundled) - _listed())
    assert not missing, f"add these to NOTICE, with licence and source: {missing}"


def test_notice_lists_only_files_that_exist():
    stale = sorted(p for p in _listed() if not (REPO / p).is_file())
    assert not stale, stale


def test_licence_is_apache_2():
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert "Apache License" in text and "Version 2.0, January 2004" in text
    assert "END OF TERMS AND CONDITIONS" in text
