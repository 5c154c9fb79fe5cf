"""The documentation pages made from the repository (docs/site_hook.py):
a model card for every named preset, on its family's page, saying what
its metadata.json says; the installation page's size table."""

import json
from pathlib import Path

import pytest

from script_loading import load_script

pytestmark = pytest.mark.once

ROOT = Path(__file__).resolve().parent.parent
site_hook = load_script("docs/site_hook.py")

METADATA = [json.loads(p.read_text(encoding="utf-8"))
            for p in sorted((ROOT / "presets").glob("*/metadata.json"))]


def test_every_family_with_presets_has_a_page_in_the_nav():
    nav = (ROOT / "mkdocs.yml").read_text(encoding="utf-8")
    for family in {m["family"] for m in METADATA}:
        page = f"families/{family}.md"
        assert (ROOT / "docs" / page).is_file(), page
        assert page in nav, page


@pytest.mark.parametrize("metadata", METADATA, ids=lambda m: m["name"])
def test_card_says_what_the_metadata_says(metadata):
    cards = site_hook.preset_cards(metadata["family"])
    card = cards[cards.index(f"### `{metadata['name']}`"):]
    card = card[:card.find("\n### ", 1) % (len(card) + 1)]
    assert metadata["license"] in card
    assert f"{metadata['params'] / 1e6:.1f}M" in card
    assert f"{metadata['params'] * 4 / 1e6:,.0f} MB" in card
    assert f"kzoo.{metadata['class_name']}" in card
    source = metadata["source"]
    assert (source.get("huggingface") or source["url"]) in card
    for head in metadata.get("heads", []):
        assert f"`{head}`" in card


def test_size_table_has_every_preset():
    rows = site_hook.size_rows()
    for metadata in METADATA:
        assert f"| `{metadata['name']}` |" in rows
    page = (ROOT / "docs" / "installation.md").read_text(encoding="utf-8")
    assert site_hook.SIZE_ROWS in page  # where the hook puts the rows
