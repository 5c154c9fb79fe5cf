"""Write the named GPT-2 preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_gpt2_presets.py --vocab PATH/vocab.json \\
        --merges PATH/merges.txt

The tokenizer files are OpenAI's GPT-2 byte-level BPE files, byte-identical
to the original `encoder.json` (vocab.json) and `vocab.bpe` (merges.txt);
the script refuses any other files (sha256 below). Their provenance: derived
from `whisper/assets/gpt2.tiktoken` in the PyPI sdist openai-whisper
20250625 (MIT, (c) OpenAI); see TOKENIZER_PROVENANCE.

All four sizes share one vocabulary, so only `gpt2_base_en` holds the files
(1.5 MB); the others' tokenizer.json say `"assets_from": "gpt2_base_en"`.
A preset saved from any of them (`save_to_preset`) gets its own copies.

Weights are not shipped: each preset names its original Hugging Face
repository (`openai-community/gpt2*`), which `from_preset` downloads and
converts (kzoo/convert/gpt2.py) into the cache on first use. Parameter
counts are computed from the configs, not typed in.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.gpt2 import GPT2Backbone, GPT2Tokenizer  # noqa: E402
from kzoo.utils.files import sha256_of, write_json  # noqa: E402

VOCAB_SHA256 = "196139668be63f3b5d6574427317ae82f612a97c5d1cdaf36ed2256dbf636783"
MERGES_SHA256 = "1ce1664773c50f3e0cc8842619a93edc4624525b728b188a9e0be33b7726adc5"
HF = "https://huggingface.co"
SHARED_ASSETS = "gpt2_base_en"

TOKENIZER_PROVENANCE = {
    "vocab.json": (
        "OpenAI GPT-2 encoder.json (byte-identical; sha256 equals tiktoken "
        "0.14.0's pinned encoder_json_hash), derived from "
        "whisper/assets/gpt2.tiktoken in the PyPI sdist openai-whisper "
        "20250625 (archive sha256 37a91a3921809d9f44748ffc73c0a55c9f366c85a3"
        "ef5c2ae0cc09540432eb96): base64 token bytes -> GPT-2 "
        "bytes_to_unicode strings, id = rank, plus <|endoftext|> = 50256. "
        "MIT, (c) OpenAI."),
    "merges.txt": (
        "OpenAI GPT-2 vocab.bpe (byte-identical; sha256 equals tiktoken "
        "0.14.0's pinned vocab_bpe_hash), derived from the same "
        "gpt2.tiktoken by re-running BPE over lower ranks to recover each "
        "merge pair: '#version: 0.2' header + 50,000 merges. MIT, "
        "(c) OpenAI."),
}

GPT2_PRESETS = {
    "gpt2_base_en": {
        "aliases": ["gpt2", "gpt2_base"],
        "shape": (12, 12, 768, 3072),
        "repo": "openai-community/gpt2",
        "description": "GPT-2 small (Radford et al., 2019): 12 layers, 768 "
                       "hidden, 12 heads, English web text (WebText).",
    },
    "gpt2_medium_en": {
        "aliases": ["gpt2_medium"],
        "shape": (24, 16, 1024, 4096),
        "repo": "openai-community/gpt2-medium",
        "description": "GPT-2 medium: 24 layers, 1024 hidden, 16 heads, "
                       "English web text (WebText).",
    },
    "gpt2_large_en": {
        "aliases": ["gpt2_large"],
        "shape": (36, 20, 1280, 5120),
        "repo": "openai-community/gpt2-large",
        "description": "GPT-2 large: 36 layers, 1280 hidden, 20 heads, "
                       "English web text (WebText).",
    },
    "gpt2_extra_large_en": {
        "aliases": ["gpt2_extra_large", "gpt2_xl"],
        "shape": (48, 25, 1600, 6400),
        "repo": "openai-community/gpt2-xl",
        "description": "GPT-2 XL (1.5B parameters): 48 layers, 1600 hidden, "
                       "25 heads, English web text (WebText).",
    },
}

VOCABULARY_SIZE = 50257
MAX_SEQUENCE_LENGTH = 1024


def parameter_count(num_layers, hidden, intermediate,
                    vocabulary_size=VOCABULARY_SIZE,
                    positions=MAX_SEQUENCE_LENGTH):
    """GPT2Backbone's parameters, from its shape (checked against a built
    model for the smaller presets)."""
    embeddings = (vocabulary_size + positions) * hidden
    block = (2 * hidden                             # ln_1
             + 3 * (hidden * hidden + hidden)       # q, k, v
             + hidden * hidden + hidden             # attention output
             + 2 * hidden                           # ln_2
             + hidden * intermediate + intermediate  # c_fc
             + intermediate * hidden + hidden)      # c_proj
    return embeddings + num_layers * block + 2 * hidden  # + ln_f


def backbone_config(name, spec):
    num_layers, num_heads, hidden_dim, intermediate_dim = spec["shape"]
    return {
        "vocabulary_size": VOCABULARY_SIZE, "num_layers": num_layers,
        "num_heads": num_heads, "hidden_dim": hidden_dim,
        "intermediate_dim": intermediate_dim,
        "max_sequence_length": MAX_SEQUENCE_LENGTH,
    }


def config_entry(config, build):
    """The config.json entry; built for real only when `build` (the large
    sizes would allocate gigabytes), otherwise from a 1-layer model's entry
    with the sizes put back."""
    if build:
        backbone = GPT2Backbone(**config, name="gpt2_backbone")
        return backbone.config_entry(), int(backbone.count_params())
    small = GPT2Backbone(**{**config, "num_layers": 1, "hidden_dim": 8,
                            "num_heads": 1, "intermediate_dim": 8,
                            "vocabulary_size": 8, "max_sequence_length": 8},
                         name="gpt2_backbone")
    entry = small.config_entry()
    entry["config"].update(config)
    return entry, None


def write_preset(root, name, spec, vocab, merges, build):
    folder = root / name
    folder.mkdir(parents=True, exist_ok=True)
    config = backbone_config(name, spec)
    entry, built_params = config_entry(config, build)
    params = parameter_count(config["num_layers"], config["hidden_dim"],
                             config["intermediate_dim"])
    if built_params is not None and built_params != params:
        raise SystemExit(f"{name}: parameter formula {params} != built "
                         f"model {built_params}")
    write_json(folder / "config.json", entry)

    tokenizer = GPT2Tokenizer(vocab, merges)
    metadata_tokenizer = {}
    if name == SHARED_ASSETS:
        tokenizer.save_to_preset(folder)
        for filename, provenance in TOKENIZER_PROVENANCE.items():
            metadata_tokenizer[filename] = {
                "sha256": sha256_of(folder / filename),
                "provenance": provenance}
    else:
        # Same vocabulary: point at the base preset's files, no copy.
        config_json = tokenizer.get_config()  # names no asset files
        write_json(folder / "tokenizer.json", {
            "class_name": "GPT2Tokenizer", "config": config_json,
            "assets_from": SHARED_ASSETS})
        for stale in tokenizer.asset_files.values():
            if (folder / stale).exists():
                (folder / stale).unlink()

    repo = spec["repo"]
    metadata = {
        "name": name,
        "aliases": spec["aliases"],
        "family": "gpt2",
        "class_name": "GPT2Backbone",
        "description": spec["description"],
        "params": params,
        "license": "MIT",
        "source": {
            "huggingface": repo,
            "revision": "main",
            "url": f"{HF}/{repo}",
            "files": [{"name": "config.json"},
                      {"name": "model.safetensors"}],
            "note": "sha256 of the hub files not recorded (the hub could not "
                    "be reached when this preset was written); a download "
                    "is checked against the sha256 the hub states for it "
                    "when it states one.",
            "how_to_get": (
                "from_preset downloads and converts it on first use; "
                f"offline, download {HF}/{repo} (config.json + "
                "model.safetensors) and run `kzoo convert <that folder> "
                f"~/.cache/kzoo/{name}`"),
        },
    }
    if metadata_tokenizer:
        metadata["tokenizer"] = metadata_tokenizer
    else:
        metadata["tokenizer_assets_from"] = SHARED_ASSETS
    write_json(folder / "metadata.json", metadata)
    print(f"wrote {folder} ({params:,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--vocab", required=True, help="GPT-2 vocab.json")
    parser.add_argument("--merges", required=True, help="GPT-2 merges.txt")
    parser.add_argument("--out",
                        default=Path(__file__).parent.parent / "presets")
    parser.add_argument("--build-up-to", type=int, default=24,
                        help="build (to check the parameter count) presets "
                             "with at most this many layers")
    args = parser.parse_args()
    if sha256_of(args.vocab) != VOCAB_SHA256:
        raise SystemExit(f"{args.vocab} is not GPT-2's vocab.json.")
    if sha256_of(args.merges) != MERGES_SHA256:
        raise SystemExit(f"{args.merges} is not GPT-2's merges.txt.")
    root = Path(args.out)
    # The base preset first: the others take their assets from it.
    for name, spec in GPT2_PRESETS.items():
        write_preset(root, name, spec, args.vocab, args.merges,
                     build=spec["shape"][0] <= args.build_up_to)


if __name__ == "__main__":
    main()
