"""Write the named AWD-LSTM preset folder under presets/.

Run once when the preset is added or changed:

    python scripts/make_awd_lstm_presets.py

The folder holds config.json, tokenizer.json and metadata.json. The config
is fastai's WikiText-103 language model (`awd_lstm_lm_config`: embedding
400, 3 LSTMs of 1152 (the last 400), dropouts embed 0.02, input 0.25,
hidden 0.15, weight 0.2; `xxpad` = 1) with its 60,000-token vocabulary.
Weights and vocabulary (`itos`) are declared remote: fastai's S3 model
zoo (`URLs.WT103_FWD`), a .tgz that kzoo cannot fetch for you, so
`metadata.json` says how to convert it by hand; `load_weights=False`
builds the model offline. The parameter count is computed from the
config.
"""

import argparse
import os
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")

from kzoo.convert.awd_lstm import LM_DROPOUTS  # noqa: E402
from kzoo.models.awd_lstm import (AwdLstmBackbone,  # noqa: E402
                                  AwdLstmTokenizer)
from kzoo.core.registry import class_entry  # noqa: E402
from kzoo.utils.files import write_json  # noqa: E402

WT103_URL = "https://s3.amazonaws.com/fast-ai-modelzoo/wt103-fwd.tgz"
NAME = "awd_lstm_wt103_en"
CONFIG = dict(vocabulary_size=60000, embedding_dim=400, lstm_dim=1152,
              num_layers=3, pad_token_id=1, **LM_DROPOUTS)


def write_preset(root):
    folder = Path(root) / NAME
    folder.mkdir(parents=True, exist_ok=True)
    backbone = AwdLstmBackbone(**CONFIG)
    write_json(folder / "config.json", backbone.config_entry())
    tokenizer = AwdLstmTokenizer()
    write_json(folder / "tokenizer.json",
               class_entry(tokenizer, tokenizer.get_config()))
    write_json(folder / "metadata.json", {
        "name": NAME, "aliases": ["awd_lstm_wt103", "ulmfit_wt103"],
        "family": "awd_lstm", "class_name": "AwdLstmBackbone",
        "description": "AWD-LSTM language model of ULMFiT (Howard & Ruder, "
                       "2018), fastai's pretrained WikiText-103 model: "
                       "embedding 400, 3 LSTM layers (1152, 1152, 400), "
                       "60,000-word vocabulary, English, forward.",
        "license": "Apache-2.0 (fastai); trained on WikiText-103 "
                   "(CC BY-SA 3.0)",
        "params": int(backbone.count_params()),
        "source": {
            "url": WT103_URL,
            "files": [{"name": "wt103-fwd.tgz", "url": WT103_URL}],
            "how_to_get": (
                "kzoo cannot fetch this (fastai's S3 model zoo, a .tgz, no "
                f"Hugging Face repository); download {WT103_URL}, unpack "
                "it (a .pth state dict and the itos_wt103.pkl vocabulary) "
                "into one folder and run `kzoo convert <that folder> "
                f"~/.cache/kzoo/{NAME}`"),
            "note": "sha256 of the original files not recorded (they could "
                    "not be fetched when this preset was written).",
        },
        "tokenizer": {"vocab.txt": {
            "provenance": "not shipped: fastai's WikiText-103 itos "
                          f"(itos_wt103.pkl in {WT103_URL}, 60,000 tokens), "
                          "converted with the weights",
            "remote": True}},
    })
    print(f"wrote {folder} ({backbone.count_params():,} parameters)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=Path(__file__).resolve().parents[1]
                        / "presets")
    write_preset(parser.parse_args().root)


if __name__ == "__main__":
    main()
