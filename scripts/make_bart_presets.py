"""Write the named BART preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_bart_presets.py

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. As RoBERTa's, BART's `vocab.json` maps GPT-2's
byte-level BPE tokens to fairseq's dictionary ids, which nothing offline
gives: metadata.json declares `vocab.json` and `merges.txt` remote files,
fetched from the Hugging Face repository with the weights;
`load_weights=False` builds the model without them.

Configs are the released ones (facebook/bart-base, bart-large,
bart-large-cnn): GELU, 1,024 positions per stack (plus BART's 2 unused
rows), no embedding scaling, LayerNorm eps 1e-5 (torch's); vocab 50,265
(bart-large-cnn: 50,264). Parameter counts are computed from the configs.
"""

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_roberta_presets import FILES, HF, source_metadata  # noqa: E402
from kzoo.models.bart import BartBackbone, BartTokenizer  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

BART_PRESETS = {
    "bart_base_en": {
        "aliases": ["bart_base"], "repo": "facebook/bart-base",
        "shape": (6, 12, 768, 3072), "vocabulary_size": 50265,
        "dropouts": (0.1, 0.1, 0.1), "heads": [],
        "description": "BART-base (Lewis et al., 2020): 6+6 layers, 768 "
                       "hidden, 12 heads; denoising pretraining on 160 GB "
                       "of cased English (RoBERTa's data).",
    },
    "bart_large_en": {
        "aliases": ["bart_large"], "repo": "facebook/bart-large",
        "shape": (12, 16, 1024, 4096), "vocabulary_size": 50265,
        "dropouts": (0.1, 0.1, 0.1), "heads": [],
        "description": "BART-large (Lewis et al., 2020): 12+12 layers, "
                       "1024 hidden, 16 heads; denoising pretraining on "
                       "cased English.",
    },
    "bart_large_cnn_en": {
        "aliases": ["bart_large_cnn"], "repo": "facebook/bart-large-cnn",
        "shape": (12, 16, 1024, 4096), "vocabulary_size": 50264,
        "dropouts": (0.1, 0.0, 0.0), "heads": ["lm_head"],
        "description": "BART-large fine-tuned for summarisation on "
                       "CNN/DailyMail (Lewis et al., 2020): 12+12 layers, "
                       "1024 hidden, 16 heads.",
    },
}


def build_backbone(spec):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    dropout, attention_dropout, activation_dropout = spec["dropouts"]
    return BartBackbone(
        vocabulary_size=spec["vocabulary_size"], num_layers=num_layers,
        num_heads=num_heads, hidden_dim=hidden_dim,
        intermediate_dim=intermediate_dim, max_sequence_length=1024,
        dropout=dropout, attention_dropout=attention_dropout,
        activation_dropout=activation_dropout, name="bart_backbone")


def write_preset(root, name, spec):
    backbone = build_backbone(spec)
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = BartTokenizer(name="bart_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    remote = (f"not shipped: fetched from {HF}/{spec['repo']} with the "
              "weights (fairseq dictionary ids, RoBERTa's, which nothing "
              "offline gives)")
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "bart",
        "class_name": "BartBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": "MIT",
        "source": source_metadata(name, spec, FILES),
        # The LM head is the embedding; only bart-large-cnn (a
        # BartForConditionalGeneration) brings a trained final_logits_bias.
        "heads": spec["heads"],
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
    parser.add_argument("--only", nargs="*")
    args = parser.parse_args()
    for name, spec in BART_PRESETS.items():
        if not args.only or name in args.only:
            write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
