"""Write the named DistilBERT preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_distil_bert_presets.py

Each folder holds config.json, tokenizer.json and metadata.json.

- `distil_bert_base_en_uncased` uses bert-base-uncased's vocab.txt (the
  checkpoint was distilled from bert-base-uncased with its tokenizer),
  which `bert_base_en_uncased` already ships: its tokenizer.json says
  `"assets_from": "bert_base_en_uncased"`, so the file is stored once.
- `distil_bert_base_multi` uses multilingual BERT's cased vocab.txt
  (119,547 tokens), which nothing offline holds: metadata.json declares it
  a remote file, fetched from the Hugging Face repository with the
  weights and converted with them into the cache
  (`kzoo.core.tokenizer._asset_file`); `load_weights=False` builds the
  model without it.

Configs are the released ones (6 layers, 768 hidden, 12 heads, 3072 FFN,
512 learned positions, GELU, LayerNorm eps 1e-12). Parameter counts come
from Hugging Face's formula and are checked against the built model.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.distil_bert import (DistilBertBackbone,  # noqa: E402
                                     DistilBertTokenizer)
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
SHARED_VOCABULARY = "bert_base_en_uncased"

DISTIL_BERT_PRESETS = {
    "distil_bert_base_en_uncased": {
        "aliases": ["distil_bert_base", "distilbert"],
        "vocabulary_size": 30522,
        "lowercase": True,
        "repo": "distilbert/distilbert-base-uncased",
        "description": "DistilBERT-base (Sanh et al., 2019): 6 layers, 768 "
                       "hidden, 12 heads, distilled from BERT-base on its "
                       "corpus; uncased English.",
    },
    "distil_bert_base_multi": {
        "aliases": ["distil_bert_multi", "distilbert_multilingual"],
        "vocabulary_size": 119547,
        "lowercase": False,
        "repo": "distilbert/distilbert-base-multilingual-cased",
        "description": "DistilBERT-base multilingual (Sanh et al., 2019): 6 "
                       "layers, 768 hidden, 12 heads, distilled from "
                       "multilingual BERT on Wikipedia in 104 languages; "
                       "cased.",
    },
}
SHAPE = dict(num_layers=6, num_heads=12, hidden_dim=768,
             intermediate_dim=3072, max_sequence_length=512)


def parameter_count(vocabulary_size, num_layers, hidden_dim,
                    intermediate_dim, max_sequence_length, **_):
    """Hugging Face's DistilBertModel, counted: embeddings and their
    LayerNorm, then per layer q/k/v/out, two LayerNorms and the FFN."""
    h, i = hidden_dim, intermediate_dim
    embeddings = (vocabulary_size + max_sequence_length) * h + 2 * h
    layer = 4 * (h * h + h) + 2 * 2 * h + (h * i + i) + (i * h + h)
    return embeddings + num_layers * layer


def source_metadata(name, files, repo):
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
    backbone = DistilBertBackbone(vocabulary_size=spec["vocabulary_size"],
                                  **SHAPE, name="distil_bert_backbone")
    params = parameter_count(spec["vocabulary_size"], **SHAPE)
    if int(backbone.count_params()) != params:
        raise SystemExit(f"{name}: formula {params} != built model "
                         f"{backbone.count_params()}")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = DistilBertTokenizer(lowercase=spec["lowercase"],
                                    name="distil_bert_tokenizer")
    entry = class_entry(tokenizer, tokenizer.get_config())
    files = ["config.json", "model.safetensors"]
    metadata = {
        "name": name,
        "aliases": spec["aliases"],
        "family": "distil_bert",
        "class_name": "DistilBertBackbone",
        "description": spec["description"],
        "params": params,
        "license": "Apache-2.0",
        # The released checkpoints are DistilBertForMaskedLM: the MLM head
        # comes with them.
        "heads": ["mlm_head"],
    }
    if spec["lowercase"]:
        # bert-base-uncased's vocab.txt, stored once (in that preset).
        entry["assets_from"] = SHARED_VOCABULARY
        metadata["tokenizer_assets_from"] = SHARED_VOCABULARY
    else:
        files.append("vocab.txt")
        metadata["tokenizer"] = {"vocab.txt": {
            "remote": True,
            "provenance": (f"not shipped: fetched from {HF}/{spec['repo']} "
                           "with the weights (multilingual BERT's cased "
                           "WordPiece vocabulary, which nothing offline "
                           "holds)")}}
    metadata["source"] = source_metadata(name, files, spec["repo"])
    write_json(folder / "tokenizer.json", entry)
    write_json(folder / "metadata.json", metadata)
    print(f"wrote {folder} ({params:,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in DISTIL_BERT_PRESETS.items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
