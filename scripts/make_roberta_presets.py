"""Write the named RoBERTa preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_roberta_presets.py

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. No tokenizer file is shipped: RoBERTa's
`vocab.json` maps GPT-2's byte-level BPE tokens to fairseq's dictionary
ids (ordered by frequency in RoBERTa's corpus), which cannot be derived
from anything reachable offline, so metadata.json declares `vocab.json`
and `merges.txt` as remote files. They are fetched from the Hugging Face
repository with the weights and converted with them into the cache
(`kzoo.core.tokenizer._asset_file`); `load_weights=False` builds the
model without them.

Configs are the released ones (FacebookAI/roberta-base, roberta-large,
distilbert/distilroberta-base: vocab 50,265, 514 positions = 512 + the
padding index + 1, one token type, LayerNorm eps 1e-5). Parameter counts
are computed from the configs, not typed in.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.models.roberta import RobertaBackbone, RobertaTokenizer  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
FILES = ["config.json", "model.safetensors", "vocab.json", "merges.txt"]

ROBERTA_PRESETS = {
    "roberta_base_en": {
        "aliases": ["roberta_base"],
        "shape": (12, 12, 768, 3072),
        "repo": "FacebookAI/roberta-base",
        "license": "MIT",
        "description": "RoBERTa-base (Liu et al., 2019): 12 layers, 768 "
                       "hidden, 12 heads, cased English (160 GB of text).",
    },
    "roberta_large_en": {
        "aliases": ["roberta_large"],
        "shape": (24, 16, 1024, 4096),
        "repo": "FacebookAI/roberta-large",
        "license": "MIT",
        "description": "RoBERTa-large (Liu et al., 2019): 24 layers, 1024 "
                       "hidden, 16 heads, cased English.",
    },
    "distil_roberta_base_en": {
        "aliases": ["distil_roberta_base", "distilroberta"],
        "shape": (6, 12, 768, 3072),
        "repo": "distilbert/distilroberta-base",
        "license": "Apache-2.0",
        "description": "DistilRoBERTa-base (Sanh et al., 2019): 6 layers, "
                       "768 hidden, 12 heads, distilled from RoBERTa-base on "
                       "OpenWebTextCorpus; cased English.",
    },
}


def source_metadata(name, spec, files=FILES):
    """Where from_preset fetches the weights and tokenizer files."""
    repo = spec["repo"]
    return {
        "huggingface": repo,
        "revision": "main",
        "url": f"{HF}/{repo}",
        "files": [{"name": f} for f in files],
        "how_to_get": (
            "from_preset downloads and converts it on first use; offline, "
            f"download {', '.join(files)} from {HF}/{repo} and run "
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
    backbone = RobertaBackbone(
        vocabulary_size=50265, num_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
        max_sequence_length=512, layer_norm_epsilon=1e-5, pad_token_id=1,
        name="roberta_backbone")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = RobertaTokenizer(name="roberta_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    remote = (f"not shipped: fetched from {HF}/{spec['repo']} with the "
              "weights (fairseq dictionary ids, which nothing offline "
              "gives)")
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "roberta",
        "class_name": "RobertaBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": spec["license"],
        "source": source_metadata(name, spec),
        # The released checkpoints are RobertaForMaskedLM: the MLM head
        # comes with them.
        "heads": ["mlm_head"],
        "tokenizer": {
            "vocab.json": {"remote": True, "provenance": remote},
            "merges.txt": {"remote": True, "provenance": remote +
                           "; byte-identical to GPT-2's merges"},
        },
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in ROBERTA_PRESETS.items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
