"""Write the named XLM-RoBERTa preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_xlm_roberta_presets.py

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. No tokenizer file is shipped: XLM-R's
`sentencepiece.bpe.model` (5 MB, trained on CC-100) is nowhere offline,
so metadata.json declares it a remote file, fetched from the Hugging Face
repository with the weights, as RoBERTa's `vocab.json` is
(`kzoo.core.tokenizer._asset_file`); `load_weights=False` builds the
model without it.

Configs are the released ones (FacebookAI/xlm-roberta-base and
xlm-roberta-large: vocab 250,002, 514 positions = 512 + the padding index
+ 1, one token type, LayerNorm eps 1e-5). Parameter counts are computed
from the configs, not typed in.
"""

import argparse
import os
import sys
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
sys.path.insert(0, str(Path(__file__).resolve().parent))

from make_roberta_presets import source_metadata  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.models.xlm_roberta import (XLMRobertaBackbone,  # noqa: E402
                                     XLMRobertaTokenizer)
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
SPM_FILE = XLMRobertaTokenizer.asset_files["proto"]
FILES = ["config.json", "model.safetensors", SPM_FILE]
VOCABULARY_SIZE = 250002

XLM_ROBERTA_PRESETS = {
    "xlm_roberta_base_multi": {
        "aliases": ["xlm_roberta_base", "xlmr_base"],
        "shape": (12, 12, 768, 3072),
        "repo": "FacebookAI/xlm-roberta-base",
        "license": "MIT",
        "description": "XLM-RoBERTa-base (Conneau et al., 2020): 12 layers, "
                       "768 hidden, 12 heads, 100 languages (2.5 TB of "
                       "CommonCrawl), SentencePiece vocabulary of 250,002.",
    },
    "xlm_roberta_large_multi": {
        "aliases": ["xlm_roberta_large", "xlmr_large"],
        "shape": (24, 16, 1024, 4096),
        "repo": "FacebookAI/xlm-roberta-large",
        "license": "MIT",
        "description": "XLM-RoBERTa-large (Conneau et al., 2020): 24 "
                       "layers, 1024 hidden, 16 heads, 100 languages.",
    },
}


def build_backbone(spec):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    return XLMRobertaBackbone(
        vocabulary_size=VOCABULARY_SIZE, num_layers=num_layers,
        num_heads=num_heads, hidden_dim=hidden_dim,
        intermediate_dim=intermediate_dim, max_sequence_length=512,
        layer_norm_epsilon=1e-5, pad_token_id=1, name="xlm_roberta_backbone")


def write_preset(root, name, spec):
    backbone = build_backbone(spec)
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = XLMRobertaTokenizer(name="xlm_roberta_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "xlm_roberta",
        "class_name": "XLMRobertaBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": spec["license"],
        "source": source_metadata(name, spec, FILES),
        # The released checkpoints are XLMRobertaForMaskedLM: the MLM head
        # comes with them.
        "heads": ["mlm_head"],
        "tokenizer": {SPM_FILE: {
            "remote": True,
            "provenance": f"not shipped: fetched from {HF}/{spec['repo']} "
                          "with the weights (XLM-R's SentencePiece model, "
                          "which nothing offline gives)"}},
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in XLM_ROBERTA_PRESETS.items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
