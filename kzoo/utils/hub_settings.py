"""Where kzoo talks to the Hugging Face hub and keeps its files, as the
environment says now: read at call time (huggingface_hub reads its own
switches once, at import). Standard library only, so that `kzoo env`
reports them without importing the backends or `kzoo.convert`.

Environment:
    KZOO_HF_ENDPOINT / HF_ENDPOINT   the hub (default https://huggingface.co)
    KZOO_OFFLINE=1 / HF_HUB_OFFLINE=1   never connect
    HF_HUB_CACHE / HF_HOME           where huggingface_hub keeps the files
"""

import os
from pathlib import Path

DEFAULT_ENDPOINT = "https://huggingface.co"
_TRUE = ("1", "true", "yes", "on")
_OFFLINE_SWITCHES = ("KZOO_OFFLINE", "HF_HUB_OFFLINE")


def endpoint():
    return (os.environ.get("KZOO_HF_ENDPOINT") or os.environ.get("HF_ENDPOINT")
            or DEFAULT_ENDPOINT).rstrip("/")


def offline_switch():
    """`"KZOO_OFFLINE=1"` (or the HF_HUB_OFFLINE one) when set, else None."""
    for name in _OFFLINE_SWITCHES:
        value = os.environ.get(name, "").strip()
        if value.lower() in _TRUE:
            return f"{name}={value}"
    return None


def offline():
    return offline_switch() is not None


def hub_cache_dir():
    """huggingface_hub's cache, as its environment variables say now."""
    for name in ("HF_HUB_CACHE", "HUGGINGFACE_HUB_CACHE"):
        if os.environ.get(name):
            return Path(os.environ[name]).expanduser()
    if os.environ.get("HF_HOME"):
        return Path(os.environ["HF_HOME"]).expanduser() / "hub"
    from huggingface_hub import constants  # its defaults (XDG_CACHE_HOME)
    return Path(constants.HF_HUB_CACHE)
