"""Fixtures for the conversion tests."""

import pytest


@pytest.fixture(autouse=True)
def _isolated_hub_cache(tmp_path_factory, monkeypatch):
    """huggingface_hub's cache (where hub downloads land) is a fresh
    folder per test, like kzoo's (tests/conftest.py): a loopback hub's
    repositories never reach the user's ~/.cache/huggingface, and no test
    finds another's downloads. kzoo reads HF_HUB_CACHE when it fetches,
    so setting it here is enough."""
    monkeypatch.setenv("HF_HUB_CACHE", str(tmp_path_factory.mktemp("hf_hub")))
    for name in ("HF_HUB_OFFLINE", "HF_ENDPOINT", "HF_TOKEN"):
        monkeypatch.delenv(name, raising=False)
