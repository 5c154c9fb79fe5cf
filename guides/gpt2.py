"""
# GPT-2 with kzoo: training, generation, classification

`kzoo.GPT2CausalLM` is GPT-2 with its language-model head (tied to the
token embedding): `fit` takes raw text, `generate` continues prompts with
a choice of samplers and a key/value cache. `kzoo.GPT2Classifier` reads
the last real token, the GPT recipe for classification.

The released GPT-2 weights (`gpt2_base_en` and larger) come from the
Hugging Face hub on first use; only the tokenizer ships with kzoo. So
that this guide runs offline on a CPU, it trains a small GPT-2 (GPT-2's
own tokenizer and architecture, 4 layers, 128 wide) from scratch on
bundled Jane Austen novels. With network access, replace the model by
`kzoo.GPT2CausalLM.from_preset("gpt2_base_en")` and every step below is
the same.

This guide:

1. trains the small GPT-2 on raw text: the loss falls, held-out
   perplexity before and after;
2. generates with each sampler: greedy, top-k, top-p, temperature, beam;
3. checks that the key/value cache gives the same tokens as rerunning
   the whole sequence, and times both;
4. fine-tunes the trained model as a classifier (which novel is a
   passage from?) against the majority-class baseline.

    KERAS_BACKEND=jax python guides/gpt2.py   # a few minutes
    KZOO_GUIDE_SMOKE=1 python guides/gpt2.py  # the test's

The smoke run trains a smaller model for a few steps: it shows that every
step runs, not that the model learns.
"""

import math
import os
import sys
import time

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv

import keras  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402
from kzoo.generation import (BeamSampler, GreedySampler,  # noqa: E402
                             RandomSampler, TopKSampler, TopPSampler)

keras.utils.set_random_seed(0)

"""
## 1. A small GPT-2, trained from scratch on raw text

`GPT2Backbone.from_preset(..., load_weights=False, **overrides)` builds
the preset's architecture at another size with random weights (GPT-2's
initialisation); the preprocessor brings GPT-2's byte-level BPE tokenizer
(50,257 tokens). The causal-LM preprocessor packs each text as
`<|endoftext|> text <|endoftext|>`, shifts the labels by one and keeps
padding out of the loss, so `fit` takes plain strings.

Training text: passages of Sense and Sensibility and Mansfield Park;
held out: Northanger Abbey. Perplexity is `exp` of the mean loss per
token: about 50,000 for a random model (the vocabulary size).
"""

SEQUENCE_LENGTH = 64
train_texts = [p for novel in ("sense_and_sensibility", "mansfield_park")
               for p in datasets.austen_passages(novel, words=40)]
held_out = datasets.austen_passages("northanger_abbey", words=40)[:64]
np.random.default_rng(0).shuffle(train_texts)
if SMOKE:
    train_texts, held_out = train_texts[:64], held_out[:16]
else:
    train_texts = train_texts[:1200]

size = (dict(num_layers=1, hidden_dim=32, num_heads=2, intermediate_dim=64)
        if SMOKE else
        dict(num_layers=4, hidden_dim=128, num_heads=4, intermediate_dim=512))
backbone = kzoo.GPT2Backbone.from_preset(
    "gpt2_base_en", load_weights=False, max_sequence_length=128,
    dropout=0.0, attention_dropout=0.0, **size)
preprocessor = kzoo.GPT2CausalLMPreprocessor.from_preset(
    "gpt2_base_en", sequence_length=SEQUENCE_LENGTH)
lm = kzoo.GPT2CausalLM(backbone, preprocessor=preprocessor)
print(f"a random GPT-2: {backbone.num_layers} layers, hidden "
      f"{backbone.hidden_dim}, {backbone.count_params():,} parameters; "
      f"{len(train_texts)} training passages")

# The default loss and metric (token accuracy) with a higher learning
# rate than fine-tuning's 5e-5: this model starts from scratch.
lm.compile(optimizer=keras.optimizers.Adam(1e-3 if SMOKE else 2e-3))


def perplexity():
    loss = lm.evaluate(held_out, batch_size=16, verbose=0)[0]
    return math.exp(loss)


before = perplexity()
start = time.time()
history = lm.fit(train_texts, batch_size=16, epochs=1 if SMOKE else 2,
                 verbose=0 if SMOKE else 2)
losses = history.history["loss"]
after = perplexity()
print(f"trained in {time.time() - start:.0f}s; training loss per epoch: "
      + " ".join(f"{loss:.3f}" for loss in losses))
print(f"held-out perplexity: {before:,.1f} before, {after:,.1f} after")

"""
## 2. Samplers

`generate(prompt, max_new_tokens=..., sampler=...)` takes a sampler by
name ("greedy", "top_k", "top_p", "beam", "random") or as an object with
its settings. Greedy and beam search are deterministic; the random
samplers take a `seed` for repeatable draws. Temperature divides the
logits: below 1 it sharpens the distribution, above 1 it flattens it.
"""

PROMPT = "It was a fine morning, and"
samplers = {
    "greedy": GreedySampler(),
    "top-k (k=10)": TopKSampler(k=10),
    "top-p (p=0.9)": TopPSampler(p=0.9),
    "temperature 0.7": RandomSampler(temperature=0.7),
    "temperature 1.5": RandomSampler(temperature=1.5),
    "beam (4 beams)": BeamSampler(num_beams=4),
}
for name, sampler in samplers.items():
    text = lm.generate(PROMPT, max_new_tokens=16, sampler=sampler, seed=1,
                       strip_prompt=True)
    print(f"{name:<16}| {text!r}")

"""
## 3. The key/value cache

With the cache (`use_cache=True`, the default) each new token runs one
position through the model and attends to the stored keys and values;
without it, every step reruns the whole sequence. The tokens are the
same; the cache is faster, and more so as the sequence grows. Both
loops are compiled on first use, so each is timed on a second call.
"""

prompts = ["It was a fine morning, and", "Her sister"]
timings, outputs = {}, {}
for use_cache in (True, False):
    lm.generate(prompts, max_new_tokens=48, use_cache=use_cache)  # compile
    start = time.time()
    outputs[use_cache] = lm.generate(prompts, max_new_tokens=48,
                                     use_cache=use_cache)
    timings[use_cache] = time.time() - start
print(f"cached and uncached give the same text: "
      f"{outputs[True] == outputs[False]}")
print(f"48 new tokens for 2 prompts: cached {timings[True]:.2f}s, "
      f"uncached {timings[False]:.2f}s")

"""
## 4. GPT-style classification

`GPT2Classifier` puts a dense layer (no bias, as Hugging Face's `score`)
on the hidden state of the last real token, the one that has read the
whole input. Here it starts from the backbone we just trained on Austen
and learns which novel a passage comes from; the baseline always says
the most common novel.
"""

(train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
    ("pride_and_prejudice", "emma", "persuasion"), words=40,
    per_novel=16 if SMOKE else 200)
classifier = kzoo.GPT2Classifier(
    backbone, num_classes=len(names),
    preprocessor=kzoo.GPT2Preprocessor.from_preset(
        "gpt2_base_en", sequence_length=SEQUENCE_LENGTH))
classifier.compile(optimizer=keras.optimizers.Adam(5e-4))
classifier.fit(train_x, train_y, batch_size=16, epochs=1 if SMOKE else 3,
               verbose=0 if SMOKE else 2)
predicted = np.argmax(classifier.predict(test_x, verbose=0), axis=-1)
accuracy = float(np.mean(predicted == test_y))
# The baseline learns from the training labels only: their most common
# novel, scored on the held-out passages.
majority = float(np.mean(test_y == np.argmax(np.bincount(train_y))))
print(f"{len(train_x)} training passages, {len(test_x)} held out")
print(f"held-out accuracy {accuracy:.1%} (majority-class baseline "
      f"{majority:.1%})")
print(f"{keras.backend.backend()} done")
