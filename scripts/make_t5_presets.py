"""Write the named T5 and Flan-T5 preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_t5_presets.py

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. T5's `spiece.model` is not shipped: it is
declared a remote file, fetched from the Hugging Face repository with the
weights (as XLM-R's SentencePiece model); `load_weights=False` builds the
model without it.

Configs are the released ones: T5 v1.0 (google-t5/t5-small, -base,
-large: ReLU FFN, tied embeddings, d_kv 64) and Flan-T5 (google/flan-t5-
small, -base, -large: T5 v1.1's gated GELU and untied LM head). Every one
has a 32,128-row embedding (32,000 pieces, 100 sentinels, 28 unused rows),
32 position buckets up to distance 128, RMSNorm epsilon 1e-6. Parameter
counts are computed from the configs (the backbone: the untied LM head of
Flan-T5 is the task's).
"""

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_roberta_presets import source_metadata  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.models.t5 import T5Backbone, T5Tokenizer  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
SPM_FILE = T5Tokenizer.asset_files["proto"]
FILES = ["config.json", "model.safetensors", SPM_FILE]
VOCABULARY_SIZE = 32128

V1_0 = dict(activation="relu", gated_feed_forward=False,
            tie_word_embeddings=True)
FLAN = dict(activation="gelu_new", gated_feed_forward=True,
            tie_word_embeddings=False)

T5_PRESETS = {
    "t5_small_multi": {
        "aliases": ["t5_small"], "repo": "google-t5/t5-small",
        "shape": (6, 8, 512, 2048), "kind": V1_0,
        "description": "T5-small (Raffel et al., 2020), v1.0: 6+6 layers, "
                       "512 hidden, 8 heads, ReLU FFN of 2048, tied "
                       "embeddings; C4 + the supervised multi-task mixture "
                       "(English, with German, French, Romanian "
                       "translation).",
    },
    "t5_base_multi": {
        "aliases": ["t5_base"], "repo": "google-t5/t5-base",
        "shape": (12, 12, 768, 3072), "kind": V1_0,
        "description": "T5-base (Raffel et al., 2020), v1.0: 12+12 layers, "
                       "768 hidden, 12 heads, ReLU FFN of 3072.",
    },
    "t5_large_multi": {
        "aliases": ["t5_large"], "repo": "google-t5/t5-large",
        "shape": (24, 16, 1024, 4096), "kind": V1_0,
        "description": "T5-large (Raffel et al., 2020), v1.0: 24+24 "
                       "layers, 1024 hidden, 16 heads, ReLU FFN of 4096.",
    },
    "flan_t5_small_multi": {
        "aliases": ["flan_t5_small"], "repo": "google/flan-t5-small",
        "shape": (8, 6, 512, 1024), "kind": FLAN,
        "description": "Flan-T5-small (Chung et al., 2022): T5 v1.1 "
                       "(gated GELU, untied LM head), 8+8 layers, 512 "
                       "hidden, 6 heads, instruction-tuned on the Flan "
                       "collection.",
    },
    "flan_t5_base_multi": {
        "aliases": ["flan_t5_base"], "repo": "google/flan-t5-base",
        "shape": (12, 12, 768, 2048), "kind": FLAN,
        "description": "Flan-T5-base (Chung et al., 2022): T5 v1.1, 12+12 "
                       "layers, 768 hidden, 12 heads, instruction-tuned.",
    },
    "flan_t5_large_multi": {
        "aliases": ["flan_t5_large"], "repo": "google/flan-t5-large",
        "shape": (24, 16, 1024, 2816), "kind": FLAN,
        "description": "Flan-T5-large (Chung et al., 2022): T5 v1.1, 24+24 "
                       "layers, 1024 hidden, 16 heads, instruction-tuned.",
    },
}


def build_backbone(spec):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    return T5Backbone(
        vocabulary_size=VOCABULARY_SIZE, num_layers=num_layers,
        num_decoder_layers=num_layers, num_heads=num_heads,
        hidden_dim=hidden_dim, intermediate_dim=intermediate_dim,
        key_value_dim=64, dropout=0.1, layer_norm_epsilon=1e-6,
        name="t5_backbone", **spec["kind"])


def write_preset(root, name, spec):
    backbone = build_backbone(spec)
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = T5Tokenizer(name="t5_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "t5",
        "class_name": "T5Backbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": "Apache-2.0",
        "source": source_metadata(name, spec, FILES),
        # The released checkpoints are T5ForConditionalGeneration: Flan's
        # untied LM head comes with them (v1.0's is the embedding).
        "heads": [] if spec["kind"]["tie_word_embeddings"] else ["lm_head"],
        "tokenizer": {SPM_FILE: {
            "remote": True,
            "provenance": f"not shipped: fetched from {HF}/{spec['repo']} "
                          "with the weights (T5's SentencePiece model, "
                          "which nothing offline gives)"}},
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    for name, spec in T5_PRESETS.items():
        if not args.only or name in args.only:
            write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
