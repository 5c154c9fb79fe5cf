"""`kzoo env`: what a bug report needs: kzoo's, Python's and the libraries'
versions, the Keras backend that will run (and, with --devices, its
devices), and where kzoo and huggingface_hub keep their files.

Versions come from the installed packages' metadata and the backend from
Keras' own settings, so nothing heavy is imported (kzoo.cli's
`BACKENDS`): under a second. Listing the devices imports the backend."""

import json
import os

from kzoo.cli.inputs import add_json_argument, emit_json

BACKENDS = False

# Distributions, by their names on PyPI: versions read from the installed
# metadata (nothing is imported for them).
LIBRARIES = ("keras", "keras-hub", "tensorflow", "tensorflow-text", "jax",
             "jaxlib", "torch", "numpy", "h5py", "tokenizers",
             "sentencepiece", "safetensors", "huggingface_hub")
ENVIRONMENT = ("KERAS_BACKEND", "KZOO_CACHE", "KZOO_OFFLINE",
               "KZOO_HF_ENDPOINT", "HF_ENDPOINT", "HF_HOME", "HF_HUB_CACHE",
               "HF_HUB_OFFLINE", "CUDA_VISIBLE_DEVICES",
               "TF_CPP_MIN_LOG_LEVEL")


def add_arguments(parser):
    parser.add_argument("--devices", action="store_true",
                        help="also list the backend's devices (imports "
                        "Keras and the backend: a few seconds)")
    add_json_argument(parser)


def configured_backend():
    """The backend `import keras` will pick, without importing it: as
    keras/src/backend/config.py decides (checked on Keras 3.15):
    KERAS_BACKEND, else keras.json's "backend" in KERAS_HOME (default
    ~/.keras, /tmp/.keras when home is not writable), else tensorflow."""
    if os.environ.get("KERAS_BACKEND"):
        return os.environ["KERAS_BACKEND"]
    home = os.environ.get("KERAS_HOME") or os.path.join(
        os.path.expanduser("~") if os.access(os.path.expanduser("~"),
                                             os.W_OK) else "/tmp", ".keras")
    try:
        with open(os.path.join(home, "keras.json")) as f:
            return json.load(f).get("backend", "tensorflow")
    except (OSError, ValueError, AttributeError):
        return "tensorflow"


def _devices(args):
    if hasattr(args, "load_kzoo"):
        args.load_kzoo()
    import keras

    from kzoo.cli import quiet_native_stderr
    try:
        with quiet_native_stderr():  # TensorFlow's "no CUDA" lines
            return [str(d) for d in keras.distribution.list_devices()]
    except Exception as e:  # noqa: BLE001 - a report must not fail
        return [f"(cannot list: {type(e).__name__}: {e})"]


def report(args=None):
    """The facts, as a dict (what --json prints); "devices" is None unless
    `args.devices`."""
    import platform
    import sys
    from importlib import metadata

    from kzoo import presets
    from kzoo.utils.hub_settings import endpoint, hub_cache_dir, offline
    from kzoo.version import __version__
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    devices = _devices(args) if getattr(args, "devices", False) else None
    return {
        "kzoo": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "backend": configured_backend(),
        "devices": devices,
        "libraries": versions,
        "paths": {"kzoo_cache": str(presets.cache_dir()),
                  "huggingface_cache": str(hub_cache_dir()),
                  "builtin_presets": _builtin()},
        "hub": {"endpoint": endpoint(), "offline": bool(offline())},
        "environment": {name: os.environ[name] for name in ENVIRONMENT
                        if name in os.environ},
    }


def _builtin():
    from kzoo import presets
    try:
        return str(presets.builtin_presets_dir())
    except presets.PresetError:
        return None


def run(args):
    facts = report(args)
    if args.json:
        emit_json(args, facts)
        return 0
    print(f"kzoo {facts['kzoo']} on Python {facts['python']} "
          f"({facts['platform']})")
    devices = ("not listed (`kzoo env --devices` lists them)"
               if facts["devices"] is None else
               ", ".join(facts["devices"]) or "none")
    print(f"backend: {facts['backend']}; devices: {devices}")
    print("libraries:")
    for name, version in facts["libraries"].items():
        print(f"  {name:<16} {version or 'not installed'}")
    print("paths:")
    for name, path in facts["paths"].items():
        print(f"  {name:<16} {path}")
    print(f"hub: {facts['hub']['endpoint']}"
          f"{' (offline)' if facts['hub']['offline'] else ''}")
    if facts["environment"]:
        print("environment:")
        for name, value in facts["environment"].items():
            print(f"  {name}={value}")
    return 0
