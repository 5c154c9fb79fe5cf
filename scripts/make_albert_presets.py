"""Write the named ALBERT preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_albert_presets.py

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. No tokenizer file is shipped: ALBERT's
`spiece.model` (a SentencePiece model of 30,000 pieces) comes with the
checkpoint and cannot be rebuilt from anything reachable offline, so
metadata.json declares it as a remote file, fetched from the Hugging Face
repository with the weights and converted with them into the cache;
`load_weights=False` builds the model without it.

Configs are the released v2 ones (albert/albert-base-v2, -large-v2,
-xlarge-v2, -xxlarge-v2): embeddings 128 wide, one shared block
(num_hidden_groups = inner_group_num = 1), vocab 30,000, 512 positions,
two token types, `gelu_new`, dropout 0, LayerNorm eps 1e-12. The hub
checkpoints are `AlbertForMaskedLM`: they hold the MLM head but not the
SOP classifier (transformers issues #9319, #12196), so the presets
promise the MLM head only. Parameter counts are computed from the
configs, not typed in.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.albert import AlbertBackbone, AlbertTokenizer  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
FILES = ["config.json", "model.safetensors", "spiece.model"]
LICENSE = "Apache-2.0"

ALBERT_PRESETS = {
    "albert_base_en_uncased": {
        "aliases": ["albert_base"],
        # (layers, heads, hidden, intermediate)
        "shape": (12, 12, 768, 3072),
        "repo": "albert/albert-base-v2",
        "description": "ALBERT-base v2 (Lan et al., 2019): 12 layers "
                       "sharing one block, 768 hidden, 12 heads, 128-wide "
                       "embeddings, uncased English.",
    },
    "albert_large_en_uncased": {
        "aliases": ["albert_large"],
        "shape": (24, 16, 1024, 4096),
        "repo": "albert/albert-large-v2",
        "description": "ALBERT-large v2: 24 layers sharing one block, 1024 "
                       "hidden, 16 heads, 128-wide embeddings, uncased "
                       "English.",
    },
    "albert_extra_large_en_uncased": {
        "aliases": ["albert_extra_large", "albert_xlarge"],
        "shape": (24, 16, 2048, 8192),
        "repo": "albert/albert-xlarge-v2",
        "description": "ALBERT-xlarge v2: 24 layers sharing one block, 2048 "
                       "hidden, 16 heads, 128-wide embeddings, uncased "
                       "English.",
    },
    "albert_extra_extra_large_en_uncased": {
        "aliases": ["albert_extra_extra_large", "albert_xxlarge"],
        "shape": (12, 64, 4096, 16384),
        "repo": "albert/albert-xxlarge-v2",
        "description": "ALBERT-xxlarge v2: 12 layers sharing one block, "
                       "4096 hidden, 64 heads, 128-wide embeddings, uncased "
                       "English.",
    },
}


def source_metadata(name, spec):
    """Where from_preset fetches the weights and the tokenizer file."""
    repo = spec["repo"]
    return {
        "huggingface": repo,
        "revision": "main",
        "url": f"{HF}/{repo}",
        "files": [{"name": f} for f in FILES],
        "how_to_get": (
            "from_preset downloads and converts it on first use; offline, "
            f"download {', '.join(FILES)} from {HF}/{repo} and run "
            f"`kzoo convert <that folder> ~/.cache/kzoo/{name} --task "
            "pretraining`"),
        "note": (
            "sha256 of the hub files not recorded (they could not be fetched "
            "when this preset was written); a download is checked against "
            "the sha256 the hub states for it (X-Linked-Etag) when it states "
            "one."),
    }


def write_preset(root, name, spec):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    backbone = AlbertBackbone(
        vocabulary_size=30000, num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
        embedding_dim=128, num_groups=1, num_inner_repetitions=1,
        dropout=0.0, attention_dropout=0.0, max_sequence_length=512,
        num_segments=2, activation="gelu_new", layer_norm_epsilon=1e-12,
        name="albert_backbone")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = AlbertTokenizer(name="albert_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "albert",
        "class_name": "AlbertBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": LICENSE,
        "source": source_metadata(name, spec),
        # The hub checkpoints are AlbertForMaskedLM, without the SOP head.
        "heads": ["mlm_head"],
        "tokenizer": {
            "spiece.model": {
                "remote": True,
                "provenance": f"not shipped: fetched from {HF}/{spec['repo']}"
                              " with the weights (ALBERT's SentencePiece "
                              "model, which nothing offline gives)"},
        },
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in ALBERT_PRESETS.items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
