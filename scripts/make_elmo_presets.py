"""Write the named ELMo preset folders under presets/.

Run once when a preset is added or changed:

    python scripts/make_elmo_presets.py

Each folder holds config.json, tokenizer.json and metadata.json. The
configs are the released options files' (allennlp's
`elmo_2x{cells}_{proj}_2048cnn_{n}xhighway_options.json`: 262 characters,
50 per token, character vectors of 16, filters [1,32] ... [7,1024] (2048
in all), relu, cell and projection clip 3, skip connections). Weights and
the word vocabulary (the 1B Word Benchmark's `vocab-2016-09-10.txt`, for
the language model's softmax) are declared remote: allennlp's S3 bucket,
which kzoo cannot fetch for you (no Hugging Face repository holds these
checkpoints), so `metadata.json` says how to convert them by hand;
`load_weights=False` builds the model offline. Parameter counts are
computed from the configs.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.models.elmo import ElmoBackbone, ElmoTokenizer  # noqa: E402
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

S3 = "https://s3-us-west-2.amazonaws.com/allennlp/models/elmo"
VOCABULARY_URL = f"{S3}/vocab-2016-09-10.txt"
FILTERS = [[1, 32], [2, 32], [3, 64], [4, 128], [5, 256], [6, 512],
           [7, 1024]]

ELMO_PRESETS = {
    "elmo_small_en": {
        "aliases": ["elmo_small"],
        "shape": (1024, 128, 1),  # LSTM cells, projection, highway layers
        "description": "ELMo small (Peters et al., 2018; AllenNLP): 2 "
                       "biLSTM layers of 1024 cells projected to 128, char "
                       "CNN of 2048 filters, 1 highway layer; 1B Word "
                       "Benchmark, English.",
    },
    "elmo_medium_en": {
        "aliases": ["elmo_medium"],
        "shape": (2048, 256, 1),
        "description": "ELMo medium (AllenNLP): 2 biLSTM layers of 2048 "
                       "cells projected to 256, char CNN of 2048 filters, "
                       "1 highway layer; 1B Word Benchmark, English.",
    },
    "elmo_original_en": {
        "aliases": ["elmo_original", "elmo"],
        "shape": (4096, 512, 2),
        "description": "ELMo original (Peters et al., 2018): 2 biLSTM "
                       "layers of 4096 cells projected to 512, char CNN of "
                       "2048 filters, 2 highway layers; 1B Word Benchmark, "
                       "English.",
    },
}


def config_for(spec):
    cells, projection, highway = spec["shape"]
    return dict(filters=FILTERS, projection_dim=projection, lstm_dim=cells,
                num_layers=2, num_highway=highway, character_embedding_dim=16,
                cnn_activation="relu", cell_clip=3.0, projection_clip=3.0,
                use_skip_connections=True)


def source_metadata(name, spec):
    cells, projection, highway = spec["shape"]
    stem = f"elmo_2x{cells}_{projection}_2048cnn_{highway}xhighway"
    folder = f"{S3}/2x{cells}_{projection}_2048cnn_{highway}xhighway"
    files = {"options.json": f"{folder}/{stem}_options.json",
             "weights.hdf5": f"{folder}/{stem}_weights.hdf5",
             "vocab-2016-09-10.txt": VOCABULARY_URL}
    return {
        "url": folder,
        "files": [{"name": n, "url": u} for n, u in files.items()],
        "how_to_get": (
            "kzoo cannot fetch these (allennlp's S3 bucket, no Hugging Face "
            f"repository); download {', '.join(files.values())} into one "
            "folder (the first as options.json) and run `kzoo convert "
            f"<that folder> ~/.cache/kzoo/{name}`"),
        "note": "sha256 of the original files not recorded (they could not "
                "be fetched when this preset was written).",
    }


def write_preset(root, name, spec):
    folder = Path(root) / name
    folder.mkdir(parents=True, exist_ok=True)
    backbone = ElmoBackbone(**config_for(spec))
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = ElmoTokenizer()
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": name, "aliases": spec["aliases"], "family": "elmo",
        "class_name": "ElmoBackbone", "description": spec["description"],
        "license": "Apache-2.0", "params": int(backbone.count_params()),
        "source": source_metadata(name, spec),
        "tokenizer": {"vocab.txt": {
            "provenance": "not shipped: the 1B Word Benchmark vocabulary "
                          f"({VOCABULARY_URL}, 793,471 words), fetched "
                          "with the weights",
            "remote": True}},
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=Path(__file__).resolve().parents[1]
                        / "presets")
    args = parser.parse_args()
    for name, spec in ELMO_PRESETS.items():
        write_preset(args.root, name, spec)


if __name__ == "__main__":
    main()
