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
vocab.txt is the same file, 30,522 tokens): it is not copied, each
tokenizer.json says `"assets_from": "bert_base_en_uncased"`, as the GPT-2
sizes share `gpt2_base_en`'s files. Weights are not shipped: from_preset
downloads and converts the original repository (kzoo/convert/electra.py),
with the discriminator's head (`ElectraForPreTraining`) or the generator's
(`ElectraForMaskedLM`). Parameter counts are computed from the configs.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.electra import ElectraBackbone, ElectraTokenizer  # noqa: E402
from kzoo.models.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

HF = "https://huggingface.co"
FILES = ["config.json", "model.safetensors"]
SHARED_ASSETS = "bert_base_en_uncased"

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
    write_json(folder / "tokenizer.json", {
        **class_entry(tokenizer, tokenizer.get_config()),
        "assets_from": SHARED_ASSETS})
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
        "tokenizer_assets_from": SHARED_ASSETS,
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    args = parser.parse_args()
    for name, spec in preset_specs().items():
        write_preset(Path(args.out), name, spec)


if __name__ == "__main__":
    main()
