"""A download's provenance is real: the commit it resolved to and each
file's sha256 are recorded in the converted preset's metadata.json,
`kzoo info` shows them, and a re-download fetches that commit again and
refuses a file whose sha256 is not the recorded one. Against the Hugging
Face hub served from 127.0.0.1 (tests/convert/convert_helpers.py)."""

import json
import os
import shutil

import pytest

import kzoo
from kzoo import cli, presets
from kzoo.utils.files import sha256_of

from convert_helpers import FakeHub, make_hf_bert, named_style_preset, \
    save_hf

pytestmark = pytest.mark.once

REPO = "kzoo-test/tiny-bert"


@pytest.fixture
def hub_and_preset(tmp_path, monkeypatch):
    """A hub serving a random tiny BERT, and a named-style preset that
    declares it by file names only, as the shipped presets do."""
    model = make_hf_bert("BertForMaskedLM", "odd36")
    folder = save_hf(model, tmp_path / "repo" / "tiny-bert")
    hub = FakeHub(tmp_path / "hub")
    hub.add_repo(REPO, folder)
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    preset = named_style_preset(
        tmp_path, folder, REPO,
        [{"name": "config.json"}, {"name": "model.safetensors"}])
    yield hub, folder, preset
    hub.stop()


def test_download_records_commit_and_sha256_and_info_shows_them(
        hub_and_preset, capsys):
    hub, folder, preset = hub_and_preset
    kzoo.BertBackbone.from_preset(str(preset))
    cached = presets.cache_dir() / "tiny_test_preset"
    source = json.loads((cached / "metadata.json").read_text())["source"]
    assert source["huggingface"] == REPO
    assert source["commit"] == hub.commit(REPO)
    assert {f["file"]: f["sha256"] for f in source["files"]} == {
        name: sha256_of(folder / name)
        for name in ("config.json", "model.safetensors")}
    capsys.readouterr()
    assert cli.main(["info", str(preset)]) == 0
    out = capsys.readouterr().out
    assert f"downloaded: {REPO} at commit {hub.commit(REPO)}" in out
    assert f"sha256 {sha256_of(folder / 'model.safetensors')}" in out
    assert cli.main(["info", str(preset), "--json"]) == 0
    shown = json.loads(capsys.readouterr().out)["downloaded"]
    assert shown["commit"] == hub.commit(REPO)


def test_redownload_is_pinned_and_checked_against_the_record(
        hub_and_preset):
    hub, folder, preset = hub_and_preset
    kzoo.BertBackbone.from_preset(str(preset))
    weights = presets.cache_dir() / "tiny_test_preset" / \
        presets.BACKBONE_WEIGHTS

    # The weights gone, the record kept: downloaded again at the recorded
    # commit (no request names the branch), and accepted.
    os.remove(weights)
    hub.log.clear()
    kzoo.BertBackbone.from_preset(str(preset))
    assert weights.is_file()
    paths = [path for server, _, path, _ in hub.log if server == "hub"]
    assert paths and all(f"/resolve/{hub.commit(REPO)}/" in path
                         for path in paths)

    # The hub now serves another file at the same commit (it states the
    # new file's own sha256, so only the record can tell), and
    # huggingface_hub's cache no longer holds the first one: refused.
    os.remove(weights)
    shutil.rmtree(os.path.join(os.environ["HF_HUB_CACHE"],
                               "models--" + REPO.replace("/", "--")))
    served = hub.root / REPO / "model.safetensors"
    served.write_bytes(served.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(presets.MissingWeightsError,
                       match="model.safetensors: sha256 mismatch.*recorded "
                       "when it was first downloaded"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert not weights.is_file()
