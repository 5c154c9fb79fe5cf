"""Write the named DeBERTa-v3 preset folders under presets/ (and, with
--stand-in, the tests' stand-in folder).

Run once when a preset is added or changed:

    python scripts/make_deberta_v3_presets.py
    python scripts/make_deberta_v3_presets.py --stand-in

Each folder holds config.json, tokenizer.json (the tokenizer's class and
config) and metadata.json. The SentencePiece model (`spm.model`) is not
shipped: it comes from the Hugging Face repository with the weights
(declared remote, as RoBERTa's vocab.json), and `load_weights=False`
builds the model without it.

Configs are the released ones (microsoft/deberta-v3-{xsmall,small,base,
large}, microsoft/mdeberta-v3-base): relative attention with 256 log
buckets reaching 512, share_att_key, p2c|c2p, no absolute positions, no
token types, LayerNorm eps 1e-7; vocab 128,100 (English) and 251,000
(mDeBERTa). Parameter counts are computed from the configs.
"""

import argparse
import os
import shutil
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.deberta_v3 import (  # noqa: E402
    DebertaV3Backbone, DebertaV3Tokenizer)
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import sha256_of, write_json  # noqa: E402

HF = "https://huggingface.co"
FILES = ["config.json", "pytorch_model.bin", "spm.model"]
ROOT = Path(__file__).resolve().parent.parent

DEBERTA_V3_PRESETS = {
    "deberta_v3_extra_small_en": {
        "aliases": ["deberta_v3_xsmall", "deberta_v3_extra_small"],
        "shape": (12, 6, 384, 1536), "vocabulary_size": 128100,
        "repo": "microsoft/deberta-v3-xsmall",
        "description": "DeBERTa-v3-xsmall (He et al., 2021): 12 layers, 384 "
                       "hidden, 6 heads, 128K SentencePiece vocabulary, "
                       "English; ELECTRA-style (RTD) pretraining.",
    },
    "deberta_v3_small_en": {
        "aliases": ["deberta_v3_small"],
        "shape": (6, 12, 768, 3072), "vocabulary_size": 128100,
        "repo": "microsoft/deberta-v3-small",
        "description": "DeBERTa-v3-small: 6 layers, 768 hidden, 12 heads, "
                       "128K vocabulary, English.",
    },
    "deberta_v3_base_en": {
        "aliases": ["deberta_v3_base"],
        "shape": (12, 12, 768, 3072), "vocabulary_size": 128100,
        "repo": "microsoft/deberta-v3-base",
        "description": "DeBERTa-v3-base: 12 layers, 768 hidden, 12 heads, "
                       "128K vocabulary, English.",
    },
    "deberta_v3_large_en": {
        "aliases": ["deberta_v3_large"],
        "shape": (24, 16, 1024, 4096), "vocabulary_size": 128100,
        "repo": "microsoft/deberta-v3-large",
        "description": "DeBERTa-v3-large: 24 layers, 1024 hidden, 16 heads, "
                       "128K vocabulary, English.",
    },
    "mdeberta_v3_base_multi": {
        "aliases": ["mdeberta_v3_base", "mdeberta"],
        "shape": (12, 12, 768, 3072), "vocabulary_size": 251000,
        "repo": "microsoft/mdeberta-v3-base",
        "description": "mDeBERTa-v3-base: 12 layers, 768 hidden, 12 heads, "
                       "250K vocabulary, 100 languages (CC100).",
    },
}


def make_backbone(spec, **overrides):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    return DebertaV3Backbone(
        vocabulary_size=spec["vocabulary_size"], num_layers=num_layers,
        num_heads=num_heads, hidden_dim=hidden_dim,
        intermediate_dim=intermediate_dim, max_sequence_length=512,
        layer_norm_epsilon=1e-7, position_buckets=256,
        max_relative_positions=512, share_att_key=True, pad_token_id=0,
        name="deberta_v3_backbone", **overrides)


def source_metadata(name, spec):
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


def write_common(folder, backbone):
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = DebertaV3Tokenizer(name="deberta_v3_tokenizer")
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))


def write_preset(root, name, spec):
    backbone = make_backbone(spec)
    folder = root / name
    write_common(folder, backbone)
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "deberta_v3",
        "class_name": "DebertaV3Backbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": "MIT",
        "source": source_metadata(name, spec),
        # The released checkpoints carry the original's MLM head
        # (lm_predictions.lm_head): named presets convert with it.
        "heads": ["mlm_head"],
        "tokenizer": {"spm.model": {
            "remote": True,
            "provenance": f"not shipped: fetched from {HF}/{spec['repo']} "
                          "with the weights"}},
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def write_stand_in(root):
    """tests/data/presets/deberta_v3_extra_small_en: the named preset's
    config with sentencepiece's Botchan test model as its spm.model."""
    name = "deberta_v3_extra_small_en"
    spec = DEBERTA_V3_PRESETS[name]
    backbone = make_backbone(spec)
    folder = root / name
    write_common(folder, backbone)
    shutil.copyfile(ROOT / "tests/data/spm/botchan_en_unigram_1000.model",
                    folder / "spm.model")
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "deberta_v3",
        "class_name": "DebertaV3Backbone",
        "description": f"Test stand-in for {name}: its config, with "
                       "sentencepiece's Botchan unigram test model as "
                       "spm.model (see tests/data/README.md).",
        "params": int(backbone.count_params()),
        "license": "Apache-2.0",
        "source": {"note": "test data: no weights, no remote source"},
        "tokenizer": {"spm.model": {
            "provenance": "tests/data/spm/botchan_en_unigram_1000.model "
                          "(sentencepiece 0.2.3's test model), verbatim",
            "sha256": sha256_of(folder / "spm.model")}},
    })
    print(f"wrote {folder}")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=ROOT / "presets")
    parser.add_argument("--stand-in", action="store_true",
                        help="write the tests' stand-in folder instead")
    args = parser.parse_args()
    if args.stand_in:
        write_stand_in(ROOT / "tests/data/presets")
        return
    for name, spec in DEBERTA_V3_PRESETS.items():
        write_preset(args.out, name, spec)


if __name__ == "__main__":
    main()
