"""`kzoo env`: what a bug report needs: kzoo's, Python's and the libraries'
versions, the active Keras backend and its devices, and where kzoo and
huggingface_hub keep their files."""

from kzoo.cli.inputs import add_json_argument, emit_json

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
    add_json_argument(parser)


def report():
    """The facts, as a dict (what --json prints)."""
    import os
    import platform
    import sys
    from importlib import metadata

    import keras

    from kzoo import presets
    from kzoo.convert.download import endpoint, hub_cache_dir, offline
    from kzoo.version import __version__
    versions = {}
    for name in LIBRARIES:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    from kzoo.cli import quiet_native_stderr
    try:
        with quiet_native_stderr():  # TensorFlow's "no CUDA" lines
            devices = [str(d) for d in keras.distribution.list_devices()]
    except Exception as e:  # noqa: BLE001 - a report must not fail
        devices = [f"(cannot list: {type(e).__name__}: {e})"]
    return {
        "kzoo": __version__,
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "backend": keras.backend.backend(),
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
    facts = report()
    if args.json:
        emit_json(args, facts)
        return 0
    print(f"kzoo {facts['kzoo']} on Python {facts['python']} "
          f"({facts['platform']})")
    print(f"backend: {facts['backend']}; devices: "
          f"{', '.join(facts['devices']) or 'none'}")
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
