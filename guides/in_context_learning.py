"""
# In-context learning with GPT-2: prompting against fine-tuning

GPT-3 (Brown et al., 2020, "Language Models are Few-Shot Learners")
showed that a large enough language model can do a task from a prompt
alone: a few labelled examples ("shots") written into the prompt, no
weight updated. This guide runs the same comparison at GPT-2's scale:

1. **Zero- and few-shot prompting**: for each test passage, a prompt
   with k labelled examples (k = 0, 1, 4, 8) and the passage; the answer
   is the label whose word the model finds most likely next (its
   log-likelihood as the continuation).
2. **Fine-tuning**: `kzoo.GPT2Classifier`, the same model with a
   classification head on its last token, trained on the same kind of
   labelled examples (8, 32 and 128 of them).

The task, from the Jane Austen novels bundled with kzoo: does a
paragraph open with **speech** or **narration**? (`datasets.austen_speech`:
each paragraph's first 16 words, its quotation marks taken out, so the
words must tell: "I", "you", "said", questions.) The classes are balanced:
chance is 0.50. Accuracy against the number of labelled examples is
saved as a plot.

    KERAS_BACKEND=jax python guides/in_context_learning.py   # gpt2_base_en
    KZOO_GUIDE_SMOKE=1 python guides/in_context_learning.py  # the test's
    python guides/in_context_learning.py --out plots/  # where the PNG goes

The full run loads `gpt2_base_en` (124M parameters, downloaded from the
Hugging Face hub on first use; `gpt2_medium_en` and larger are one word
away). The smoke run (the test's, offline) uses a one-layer random GPT-2
with the real tokenizer and a few passages: it shows that every step runs;
its accuracies mean nothing.
"""

import os
import sys
import time
from pathlib import Path

os.environ.setdefault("KERAS_BACKEND", "jax")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
SMOKE = os.environ.get("KZOO_GUIDE_SMOKE") == "1" or "--smoke" in sys.argv
OUT = Path(sys.argv[sys.argv.index("--out") + 1]) if "--out" in sys.argv \
    else Path.cwd()

import keras  # noqa: E402
import matplotlib  # noqa: E402

matplotlib.use("Agg")  # files only, no window
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

SIZES = {
    # test passages (half of each class), prompt draws per shot count,
    # shot counts, fine-tuning sizes, steps per fine-tuning run
    "smoke": dict(test=8, draws=1, shots=(0, 1, 4), fine_tune=(8,),
                  steps=2),
    "full": dict(test=200, draws=3, shots=(0, 1, 4, 8),
                 fine_tune=(8, 32, 128), steps=64),
}["smoke" if SMOKE else "full"]
SEED = 0
PRESET = "gpt2_base_en"
keras.utils.set_random_seed(SEED)
start = time.time()

"""
## 1. The data

Training examples (to draw shots from and to fine-tune on) and held-out
test passages come from *Pride and Prejudice* and *Emma*; no test passage
is ever a shot.
"""

(train_x, train_y), (test_x, test_y) = datasets.austen_speech(
    novels=("pride_and_prejudice", "emma"), words=16,
    test_per_class=SIZES["test"] // 2, seed=SEED)
LABELS = ("narration", "speech")  # label 0, label 1
print(f"{len(train_x)} training passages to draw from, {len(test_x)} "
      f"held out; chance 0.50")
print(f"e.g. {LABELS[test_y[0]]}: {test_x[0]!r}")

"""
## 2. The model

`GPT2CausalLM` is GPT-2 with its language-model head. The smoke run
builds the preset's architecture at a tiny size with random weights.
"""

if SMOKE:
    backbone = kzoo.GPT2Backbone.from_preset(
        PRESET, load_weights=False, num_layers=1, hidden_dim=32,
        num_heads=2, intermediate_dim=64, max_sequence_length=512)
    lm = kzoo.GPT2CausalLM(backbone)
else:
    lm = kzoo.GPT2CausalLM.from_preset(PRESET)
tokenizer = kzoo.GPT2Tokenizer.from_preset(PRESET)
print(f"GPT-2: {lm.backbone.count_params():,} parameters")

"""
## 3. Prompts and scoring

Every prompt starts with an instruction, then k solved examples, then
the test passage with its answer left open:

    Is each passage speech or narration?

    Passage: I am sure I shall never be able to thank you enough
    Answer: speech

    Passage: <the test passage>
    Answer:

Both label words, " speech" and " narration", are one GPT-2 token each,
so one forward pass scores both: the logits at the last position, turned
into log-probabilities, give each label's log-likelihood as the next
token, and the larger one is the answer. (With labels of several tokens,
sum each token's log-probability over one pass per label.)

The shots are drawn at random from the training passages, a fresh draw
per test passage, each label equally likely; the accuracy of few-shot
prompts moves a lot with which examples are drawn (Zhao et al., 2021,
"Calibrate Before Use"), so each shot count is measured over several
seeds.
"""

INSTRUCTION = "Is each passage speech or narration?\n\n"
LABEL_IDS = [int(np.asarray(tokenizer.tokenize(" " + label))[0])
             for label in LABELS]
assert all(len(np.asarray(tokenizer.tokenize(" " + label))) == 1
           for label in LABELS)


def prompt(passage, shots):
    solved = "".join(f"Passage: {x}\nAnswer: {LABELS[y]}\n\n"
                     for x, y in shots)
    return f"{INSTRUCTION}{solved}Passage: {passage}\nAnswer:"


def draw_shots(k, rng):
    """k training examples, each of a random class."""
    by_class = [np.flatnonzero(train_y == c) for c in (0, 1)]
    picks = [int(rng.choice(by_class[rng.integers(2)])) for _ in range(k)]
    return [(train_x[i], int(train_y[i])) for i in picks]


def next_token_log_probs(prompts, batch_size=8):
    """Log-probabilities of the two label tokens after each prompt."""
    rows = [np.asarray(tokenizer.tokenize(p)) for p in prompts]
    # One padded length for all the batches (a multiple of 64): each new
    # shape would compile the model again.
    length = -(-max(len(r) for r in rows) // 64) * 64
    embeddings = keras.ops.convert_to_numpy(
        lm.backbone.token_embedding.embeddings)
    scores = []
    for i in range(0, len(rows), batch_size):
        batch = rows[i:i + batch_size]
        ids = np.zeros((batch_size, length), "int32")
        mask = np.zeros((batch_size, length), "int32")
        for j, row in enumerate(batch):
            ids[j, :len(row)], mask[j, :len(row)] = row, 1
        hidden = lm.backbone.predict_on_batch(
            {"token_ids": ids, "padding_mask": mask})
        hidden = np.asarray(keras.ops.convert_to_numpy(hidden), "float64")
        last = hidden[np.arange(len(batch)),
                      [len(r) - 1 for r in batch]]  # (batch, hidden)
        logits = last @ embeddings.T  # the tied LM head
        logits -= logits.max(-1, keepdims=True)
        log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
        scores.append(log_probs[:, LABEL_IDS])
    return np.concatenate(scores)


print(prompt(test_x[0], draw_shots(1, np.random.default_rng(SEED))))

"""
## 4. Accuracy against the number of shots
"""

prompting = {}
for k in SIZES["shots"]:
    began = time.time()
    draws = 1 if k == 0 else SIZES["draws"]  # zero shots: nothing to draw
    accuracies = []
    for draw in range(draws):
        rng = np.random.default_rng([SEED, k, draw])
        log_probs = next_token_log_probs(
            [prompt(x, draw_shots(k, rng)) for x in test_x])
        accuracies.append(float(np.mean(log_probs.argmax(-1) == test_y)))
    prompting[k] = accuracies
    print(f"{k}-shot prompting: accuracy {np.mean(accuracies):.3f} "
          f"(draws: " + " ".join(f"{a:.3f}" for a in accuracies)
          + f"), {time.time() - began:.0f}s")

"""
## 5. Fine-tuning on the same labels

`GPT2Classifier` reads the hidden state of the last real token with a
new dense layer. Each run starts from the pretrained weights and takes
the same number of optimizer steps (batches of 8), whatever the number
of examples, so the smaller sets are seen for more epochs. The inputs are
the passages alone: no instruction, no label words.
"""


def new_classifier():
    keras.utils.set_random_seed(SEED)
    preprocessor = kzoo.GPT2Preprocessor.from_preset(PRESET,
                                                     sequence_length=32)
    if SMOKE:
        classifier_backbone = kzoo.GPT2Backbone.from_preset(
            PRESET, load_weights=False, num_layers=1, hidden_dim=32,
            num_heads=2, intermediate_dim=64, max_sequence_length=64)
        return kzoo.GPT2Classifier(classifier_backbone, num_classes=2,
                                   preprocessor=preprocessor)
    return kzoo.GPT2Classifier.from_preset(PRESET, num_classes=2,
                                           preprocessor=preprocessor)


fine_tuning = {}
for n in SIZES["fine_tune"]:
    began = time.time()
    rng = np.random.default_rng([SEED, n])
    picks = np.concatenate([rng.choice(np.flatnonzero(train_y == c), n // 2,
                                       replace=False) for c in (0, 1)])
    classifier = new_classifier()
    classifier.compile(optimizer=keras.optimizers.AdamW(
        1e-3 if SMOKE else 2e-5))
    classifier.fit([train_x[i] for i in picks], train_y[picks],
                   batch_size=8, epochs=max(1, SIZES["steps"] * 8 // n),
                   verbose=0)
    predicted = classifier.predict(test_x, batch_size=32, verbose=0)
    fine_tuning[n] = float(np.mean(predicted.argmax(-1) == test_y))
    print(f"fine-tuned on {n} examples: accuracy {fine_tuning[n]:.3f}, "
          f"{time.time() - began:.0f}s")

"""
The output at the end of this page is a smoke run: the full run needs
`gpt2_base_en`'s weights from the Hugging Face hub, which the machine
that recorded it cannot reach, so no full run's numbers are shown here.
Reading your full run: the GPT-3 paper found that the gain from more
shots grows with the model's size, and that its smallest model (125M
parameters, GPT-2 small's size) gained little from them on most tasks.
Compare the spread over draws with the differences between shot counts
before reading a trend into the prompting curve, and see how many
labelled examples fine-tuning needs to pass it. Set
`PRESET = "gpt2_large_en"` (774M) to see how far size moves the
prompting curve.

## 6. The plot

Accuracy against the number of labelled examples: the examples in the
prompt (each draw a dot, the mean a line) and the examples fine-tuned
on; chance dashed.
"""

counts = sorted(set(SIZES["shots"]) | set(SIZES["fine_tune"]))
position = {n: i for i, n in enumerate(counts)}  # 0 has no log scale
figure, axes = plt.subplots(figsize=(7, 4))
axes.plot([position[k] for k in prompting],
          [np.mean(a) for a in prompting.values()], marker="o",
          label="prompting (k shots)")
for k, accuracies in prompting.items():
    axes.scatter([position[k]] * len(accuracies), accuracies, s=12,
                 color="tab:blue", alpha=0.4)
axes.plot([position[n] for n in fine_tuning], list(fine_tuning.values()),
          marker="s", label="fine-tuning (GPT2Classifier)")
axes.axhline(0.5, color="grey", linestyle="--", label="chance")
axes.set_xticks(range(len(counts)), [str(n) for n in counts])
axes.set(xlabel="labelled examples", ylabel="held-out accuracy",
         title=f"Speech or narration? ({PRESET}"
               + (", tiny random: smoke run)" if SMOKE else ")"),
         ylim=(0, 1))
axes.legend()
figure.tight_layout()
OUT.mkdir(parents=True, exist_ok=True)
plot = OUT / "in_context_learning.png"
figure.savefig(plot, dpi=100)
print(f"plot saved to {plot}")
print(f"{keras.backend.backend()} done in {time.time() - start:.0f}s")
