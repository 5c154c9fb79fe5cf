"""The wheel ships every preset folder inside the package."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

# Building and reading the wheel does not depend on the backend.
pytestmark = pytest.mark.once

REPO = Path(__file__).resolve().parent.parent
PRESET_FILES = ("config.json", "metadata.json", "tokenizer.json")


@pytest.fixture(scope="session")
def wheel(tmp_path_factory):
    """Build the wheel once per session (a few seconds, no network)."""
    out = tmp_path_factory.mktemp("wheel")
    result = subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps",
         "--no-build-isolation", "-w", str(out), str(REPO)],
        capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    wheels = list(out.glob("kzoo-*.whl"))
    assert len(wheels) == 1, wheels
    return wheels[0]


def test_every_preset_is_in_the_wheel(wheel):
    presets = sorted(p.name for p in (REPO / "presets").iterdir()
                     if (p / "metadata.json").is_file())
    assert {"bert_tiny_en_uncased", "bert_small_en_uncased",
            "bert_base_en_uncased", "bert_large_en_uncased"} <= set(presets)
    with zipfile.ZipFile(wheel) as archive:
        names = set(archive.namelist())
        for preset in presets:
            folder = REPO / "presets" / preset
            for path in folder.iterdir():
                if not path.is_file():
                    continue
                member = f"kzoo/_presets/{preset}/{path.name}"
                assert member in names, f"{member} missing from the wheel"
                assert archive.read(member) == path.read_bytes(), member
            for required in PRESET_FILES:
                assert f"kzoo/_presets/{preset}/{required}" in names


def test_bert_vocabularies_are_in_the_wheel(wheel):
    with zipfile.ZipFile(wheel) as archive:
        for name in ("bert_tiny_en_uncased", "bert_base_en_uncased"):
            vocab = archive.read(f"kzoo/_presets/{name}/vocab.txt")
            assert len(vocab.decode("utf-8").splitlines()) == 30522


def test_wheel_holds_the_package_not_the_tests(wheel):
    with zipfile.ZipFile(wheel) as archive:
        names = archive.namelist()
    assert "kzoo/__init__.py" in names
    # The console script's entry point, outside the package (see it).
    assert "kzoo_launcher.py" in names
    entry_points = next(n for n in names if n.endswith("entry_points.txt"))
    with zipfile.ZipFile(wheel) as archive:
        assert "kzoo = kzoo_launcher:main" in archive.read(
            entry_points).decode()
    assert "kzoo/models/bert/backbone.py" in names
    assert not any(n.startswith("tests/") for n in names)


def test_licence_and_notice_are_in_the_wheel(wheel):
    # The wheel carries presets/ with third-party vocabularies and
    # kzoo/data/ with the novels: their licences travel with them.
    with zipfile.ZipFile(wheel) as archive:
        licences = {Path(n).name: n for n in archive.namelist()
                    if ".dist-info/licenses/" in n}
        for name in ("LICENSE", "NOTICE"):
            assert name in licences, sorted(licences)
            assert (archive.read(licences[name])
                    == (REPO / name).read_bytes()), name
        metadata = next(archive.read(n).decode() for n in archive.namelist()
                        if n.endswith(".dist-info/METADATA"))
    assert "License-Expression: Apache-2.0" in metadata
    assert "Apache License" in (REPO / "LICENSE").read_text()
