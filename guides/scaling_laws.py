"""
# Scaling laws on a laptop

Kaplan et al. (2020), "Scaling Laws for Neural Language Models", trained
GPT-style language models from 768 to 1.5 billion parameters and found
that held-out loss falls as a power law in each of three quantities when
the other two do not hold it back: the number of parameters N, the
number of training tokens D and the training compute C (about 6·N·D
floating-point operations: 2·N per token forward, twice that backward).
Their fits, `L(N) = (N_c / N)^0.076` and `L(C_min) = (C_c / C)^0.050`,
count N *without* the embedding tables, which is what made models of
different shapes fall on one line.

This guide reproduces the experiment at the smallest scale that still
shows something: a ladder of six GPT-2 models (`kzoo.GPT2Backbone`,
`kzoo.GPT2CausalLM`) from about 13 thousand to 0.8 million non-embedding
parameters, each trained on the same characters of five Jane Austen
novels (bundled with kzoo) and scored on the sixth, which none of them
has read. It then

1. fits `L(N) = E + A / N^alpha` to the held-out losses (E: the loss no
   model size removes), and Kaplan's pure power law beside it;
2. records each model's held-out loss at a few points of its training,
   takes the compute frontier (the lowest loss reached for each budget
   of C = 6·N·D, whichever model reached it) and fits `L(C)` to it;
3. plots both, log-log, to `scaling_laws.png`.

    pip install -e ".[guides,jax]"    # in a kzoo clone: matplotlib
    KERAS_BACKEND=jax python guides/scaling_laws.py  # 9 CPU-minutes
    KZOO_GUIDE_SMOKE=1 python guides/scaling_laws.py # the test's, seconds
    python guides/scaling_laws.py --out plots/  # where the PNG goes

The smoke run trains three tiny models for a few steps: it shows that
every step runs and the fits work on whatever points exist, not a
scaling law.
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
from matplotlib.ticker import FormatStrFormatter  # noqa: E402
import numpy as np  # noqa: E402

import kzoo  # noqa: E402
from kzoo import datasets  # noqa: E402

SIZES = {
    # (layers, hidden width) per model; the training budget in steps of
    # `batch_size` windows of `sequence_length` characters; the held-out
    # loss is measured after each step count in `checkpoints`.
    "smoke": dict(ladder=[(1, 16), (1, 32), (2, 48)], sequence_length=64,
                  batch_size=8, checkpoints=[8, 16], held_out_windows=16),
    "full": dict(ladder=[(1, 32), (2, 32), (2, 48), (3, 64), (3, 96),
                         (4, 128)],
                 sequence_length=128, batch_size=4,
                 checkpoints=[48, 96, 192, 384, 768, 1536, 3072],
                 held_out_windows=128),
}["smoke" if SMOKE else "full"]
start = time.time()

"""
## 1. The text, one character per token

kzoo ships GPT-2's byte-level BPE (`kzoo.GPT2Tokenizer.from_preset(
"gpt2_base_en")`), and `guides/gpt2.py` uses it. It is the wrong
tokenizer for models this small: its 50,257-row embedding table would
hold 1.6 million parameters at width 32, a hundred times the smallest
model's non-embedding N, and the output softmax over 50,257 tokens
would cost more than all the transformer blocks together, so wall time
would follow the vocabulary, not 6·N·D. Kaplan's accounting (embeddings
out of N and out of C) only holds when the blocks dominate, so this
guide reads the novels one character at a time: 80 distinct characters,
a negligible embedding, and compute that is the blocks'. The losses are
in nats per character (divide by ln 2 for bits); they are not
comparable with Kaplan's, which are per BPE token of web text.

Training text: Sense and Sensibility, Pride and Prejudice, Mansfield
Park, Emma and Northanger Abbey (3.5 million characters). Held out:
Persuasion. The text is cut into windows of `sequence_length + 1`
characters (the inputs and, shifted by one, the targets) and the
training windows are shuffled once: every model sees the same windows
in the same order, each at most once, as in Kaplan's runs (no data
repeats). The alphabet is counted over all six novels so that no
held-out character is unknown; that is all the held-out text gives.
"""

HELD_OUT = "persuasion"
texts = {novel: "\n".join(datasets.austen_paragraphs(novel, min_words=1))
         for novel in datasets.AUSTEN_NOVELS}
codes = np.frombuffer("".join(texts.values()).encode("utf-32-le"),
                      dtype=np.uint32)
alphabet, ids = np.unique(codes, return_inverse=True)
ids = ids.astype("int32")
held_out_start = sum(len(texts[n]) for n in datasets.AUSTEN_NOVELS
                     [:datasets.AUSTEN_NOVELS.index(HELD_OUT)])
held_out_ids = ids[held_out_start:held_out_start + len(texts[HELD_OUT])]
train_ids = np.concatenate([ids[:held_out_start],
                            ids[held_out_start + len(texts[HELD_OUT]):]])
VOCABULARY = len(alphabet)


def windows(stream, length):
    """`stream` cut into consecutive, non-overlapping windows of `length`
    ids, as inputs (all but the last id) and targets (all but the first).
    """
    rows = stream[:len(stream) // length * length].reshape(-1, length)
    x = {"token_ids": rows[:, :-1],
         "padding_mask": np.ones_like(rows[:, :-1])}
    return x, rows[:, 1:]


length = SIZES["sequence_length"] + 1
train_x, train_y = windows(train_ids, length)
order = np.random.default_rng(0).permutation(len(train_y))
steps = SIZES["checkpoints"][-1]
used = order[:steps * SIZES["batch_size"]]  # the budget, in order
train_x = {key: value[used] for key, value in train_x.items()}
train_y = train_y[used]
held_x, held_y = windows(held_out_ids, length)
held_x = {key: value[:SIZES["held_out_windows"]]
          for key, value in held_x.items()}
held_y = held_y[:SIZES["held_out_windows"]]
TOKENS_PER_STEP = SIZES["batch_size"] * SIZES["sequence_length"]
print(f"{VOCABULARY} characters; {len(train_ids):,} training characters, "
      f"of which each model reads {steps * TOKENS_PER_STEP:,}; "
      f"{held_y.size:,} held-out characters of {HELD_OUT}")

"""
## 2. The ladder

Each model is GPT-2 with a width and a depth (heads of 16 or 32
dimensions, the feed-forward layer four times as wide), random weights
and no dropout: with every window read once there is nothing to overfit.
GPT-2 draws its weights with a standard deviation of 0.02, right for its
width of 768 (about 0.55 / sqrt(768)); at width 32 that is four times
too small, the attention starts almost uniform and the model sits for
most of a short run on the plateau of a character-pair model (in a run
of half this length the 2-layer, width-32 model ended at 2.37 nats
instead of 2.09). So the
deviation is scaled as 1 / sqrt(width), 0.02 at 768: 0.098 at width 32,
0.049 at 128. N counts every weight except the token and position
embeddings, as Kaplan counted it (12·layers·width² plus the biases and
layer norms).

All models train with Adam, a linear warmup over the first 10% of the
steps and a cosine decay to zero, gradients clipped to norm 1, in
batches of 4 windows (512 characters). Adam moves every weight by about
the learning rate whatever its gradient; in a layer with `width` inputs
those moves add up, so a layer's output changes by about rate · width
per step, and the rate must shrink as 1 / width for every width to learn
at the same pace (the rule of muP, Yang et al. 2022, for the hidden
layers). So the peak learning rate is `0.2 / width`: 0.0063 at width 32,
0.0016 at 128. A dozen trial runs on this data, half this length, chose
the 0.2 and the batch. Kaplan's own rule, `0.003239 - 0.0001395 ln N`
(for runs of 250,000 steps; these take 3,072), falls too slowly with
size: made large enough for the small models (3.5 times), it left the
3-layer models behind the 2-layer ones (2.06 nats at width 64, against
1.92 with 0.003). Batches of 16 or 8 windows (fewer, larger steps for
the same characters) ended higher for every rate tried: at this loss
the critical batch (Kaplan's `B_crit`, which grows as the loss falls)
is small. Tuning the rate per model would lower every point; the point
of one rule is that no model gets more care than another.
"""


def new_model(layers, width):
    keras.utils.set_random_seed(0)
    backbone = kzoo.GPT2Backbone(
        vocabulary_size=VOCABULARY, num_layers=layers, hidden_dim=width,
        num_heads=max(1, width // 32) if width >= 64 else width // 16,
        intermediate_dim=4 * width, dropout=0.0, attention_dropout=0.0,
        max_sequence_length=SIZES["sequence_length"],
        initializer_range=0.02 * (768 / width) ** 0.5)  # see above
    lm = kzoo.GPT2CausalLM(backbone)
    embedding = (VOCABULARY + SIZES["sequence_length"]) * width
    return lm, backbone.count_params() - embedding


def compile_for(lm, width):
    peak = 0.2 / width  # see above
    warmup = max(1, steps // 10)
    schedule = keras.optimizers.schedules.CosineDecay(
        0.0, decay_steps=steps - warmup, alpha=0.0,
        warmup_target=float(peak), warmup_steps=warmup)
    lm.compile(
        optimizer=keras.optimizers.Adam(schedule, global_clipnorm=1.0),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    return peak


"""
## 3. Training, with the held-out loss along the way

Each model trains for the budget in segments, and after each segment
(at the step counts in `checkpoints`, doubling) the held-out loss is
measured: the last one is the model's point for `L(N)`, all of them are
points for `L(C)`. The windows are already in their shuffled order, so
`fit` runs through them without shuffling.
"""

print(f"{'layers':>6} {'width':>5} {'N':>9} {'loss':>6} {'bits':>5} "
      f"{'C = 6ND':>9} {'time':>5}")
results = []
for layers, width in SIZES["ladder"]:
    began = time.time()
    lm, n = new_model(layers, width)
    peak = compile_for(lm, width)
    curve, done = [], 0
    for checkpoint in SIZES["checkpoints"]:
        part = slice(done * SIZES["batch_size"],
                     checkpoint * SIZES["batch_size"])
        lm.fit({key: value[part] for key, value in train_x.items()},
               train_y[part], batch_size=SIZES["batch_size"], epochs=1,
               shuffle=False, verbose=0)
        done = checkpoint
        loss = lm.evaluate(held_x, held_y, batch_size=64, verbose=0,
                           return_dict=True)["loss"]
        curve.append((6 * n * checkpoint * TOKENS_PER_STEP, float(loss)))
    compute, loss = curve[-1]
    results.append(dict(layers=layers, width=width, n=n, loss=loss,
                        compute=compute, curve=curve, peak=peak))
    print(f"{layers:>6} {width:>5} {n:>9,} {loss:>6.3f} "
          f"{loss / np.log(2):>5.3f} {compute:>9.2e} "
          f"{time.time() - began:>4.0f}s", flush=True)

"""
## 4. Loss against parameters

`L(N) = E + A / N^alpha` has three unknowns, and for a fixed E it is a
straight line in log-log coordinates: `log(L - E) = log A - alpha log N`.
So the fit tries every E on a fine grid between 0 and just below the
lowest loss, fits that line by least squares, and keeps the E whose
curve is closest to the losses (least squares in L). No optimizer, no
starting guess, and numpy is enough. Kaplan's form is the same fit with
E = 0: a single straight line through the points in log-log.
"""


def fit_power_law(x, loss):
    """(E, A, alpha) of `loss = E + A * x**-alpha` by least squares,
    searching E on a grid and fitting log(loss - E) against log x."""
    x, loss = np.asarray(x, "float64"), np.asarray(loss, "float64")
    best = None
    for e in np.linspace(0.0, loss.min(), 2000, endpoint=False):
        slope, intercept = np.polyfit(np.log(x), np.log(loss - e), 1)
        error = np.sum((e + np.exp(intercept) * x ** slope - loss) ** 2)
        if best is None or error < best[0]:
            best = (error, e, np.exp(intercept), -slope)
    return best[1:]


def pure_power_law(x, loss):
    """alpha of Kaplan's `loss = (x_c / x)**alpha`: the log-log slope."""
    slope, _ = np.polyfit(np.log(x), np.log(loss), 1)
    return -slope


n_values = [r["n"] for r in results]
losses = [r["loss"] for r in results]
e_n, a_n, alpha_n = fit_power_law(n_values, losses)
print(f"L(N) = {e_n:.3f} + {a_n:.4g} / N^{alpha_n:.3f}")
slope_n = pure_power_law(n_values, losses)
print(f"pure power law (E = 0): L(N) ~ N^-{slope_n:.3f} "
      f"(Kaplan et al.: 0.076)")

"""
## 5. Loss against compute: the frontier

Every checkpoint of every model is a point (C, held-out loss). For a
budget C, the best model is the one whose curve is lowest there: small
models win small budgets (they learn faster per operation), larger ones
take over as C grows. The frontier is the checkpoints no other beats
with less compute, and `L(C)` is fitted to those, as Kaplan fitted
`L(C_min)` to the envelope of their learning curves. Kaplan's C is in
PF-days (8.64e19 operations); here it is plain operations.
"""

points = sorted((c, loss) for r in results for c, loss in r["curve"])
frontier, lowest = [], np.inf
for c, loss in points:
    if loss < lowest:
        frontier.append((c, loss))
        lowest = loss
c_values, c_losses = zip(*frontier)
e_c, a_c, alpha_c = fit_power_law(c_values, c_losses)
print(f"compute frontier: {len(frontier)} of {len(points)} checkpoints")
print(f"L(C) = {e_c:.3f} + {a_c:.4g} / C^{alpha_c:.3f}")
slope_c = pure_power_law(c_values, c_losses)
print(f"pure power law (E = 0): L(C) ~ C^-{slope_c:.3f} "
      f"(Kaplan et al.: 0.050)")

"""
What one full run printed (jax, 2 CPU cores shared with other jobs):

    layers width         N   loss  bits   C = 6ND  time
         1    32    12,768  1.875 2.705  1.20e+11   23s
         2    32    25,472  1.806 2.606  2.40e+11   27s
         2    48    56,640  1.695 2.445  5.35e+11   48s
         3    64   150,080  1.641 2.367  1.42e+12  100s
         3    96   335,712  1.632 2.354  3.17e+12  158s
         4   128   793,344  1.656 2.389  7.49e+12  334s
    L(N) = 1.615 + 62.29 / N^0.600
    pure power law (E = 0): L(N) ~ N^-0.032 (Kaplan et al.: 0.076)
    compute frontier: 16 of 42 checkpoints
    L(C) = 1.259 + 435 / C^0.251
    pure power law (E = 0): L(C) ~ C^-0.102 (Kaplan et al.: 0.050)

Loss falls with N up to a sixth of a million parameters and then
stops: the 336k model gains 0.01 nats on the 150k one, and the largest
ends 0.02 above it. Kaplan's `L(N, D)` flattens at a fixed D too small
for N, it does not rise: the rise is this run's own, one seed and one
learning-rate rule (0.0016 at width 128, for 3,072 steps), and whatever
its cause, at this budget a model past ~150k parameters buys nothing.
The fitted E (1.6) is where this budget stops, far above what the text
allows (good character models of English reach about 1 bit, 0.7 nats,
per character), and the fitted 0.60 is the steepness of the approach to
that floor, not Kaplan's exponent. The frontier is cleaner: at each
budget a different model is best, smaller ones first, and the 56k, 150k
and 336k models take the last stretch in turn.

## 6. The plot

Left, the held-out loss of each model after the whole budget against N,
with the fitted curve; right, each model's learning curve against
compute, the frontier points circled and the fitted `L(C)` dashed.
"""

figure, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
grid = np.geomspace(min(n_values) / 1.5, max(n_values) * 1.5, 100)
left.plot(n_values, losses, "o", color="black", label="held-out loss")
left.plot(grid, e_n + a_n * grid ** -alpha_n, color="tab:red",
          label=f"{e_n:.2f} + {a_n:.3g} / N^{alpha_n:.2f}")
left.set(xscale="log", yscale="log", xlabel="non-embedding parameters N",
         ylabel="held-out loss (nats/char)",
         title="Loss against model size, same data")
for r in results:
    c, loss = zip(*r["curve"])
    right.plot(c, loss, marker=".", label=f"N = {r['n']:,}")
grid = np.geomspace(min(c_values) / 1.5, max(c_values) * 1.5, 100)
right.plot(grid, e_c + a_c * grid ** -alpha_c, "--", color="black",
           label=f"frontier fit, alpha {alpha_c:.2f}")
right.plot(c_values, c_losses, "o", mfc="none", color="black", ms=9)
right.set(xscale="log", yscale="log", xlabel="compute C = 6ND (FLOPs)",
          ylabel="held-out loss (nats/char)",
          title="Learning curves and the compute frontier")
for axes in (left, right):
    axes.legend(fontsize=7)
    for axis in (axes.yaxis.set_major_formatter,
                 axes.yaxis.set_minor_formatter):
        axis(FormatStrFormatter("%.2f"))  # 1.75, not 1.75 x 10^0
figure.tight_layout()
OUT.mkdir(parents=True, exist_ok=True)
plot = OUT / "scaling_laws.png"
figure.savefig(plot, dpi=100)
print(f"plots saved to {plot}")

"""
## What a laptop-sized ladder can and cannot show

It can show the shape: held-out loss falls with N at a fixed amount of
data until the data runs short, and the compute frontier is a smooth
curve made of different models, the smaller ones first, which is the
law's practical message: for a budget there is a best model size, and it
grows with the budget.

It cannot pin down the exponents. Six points over two orders of
magnitude, one seed each, fit three parameters: E and alpha trade off
against each other (a larger E goes with a larger alpha), so the fitted
alpha moves a lot with the ladder, the learning rate, the seed and, most
of all, the budget (with half the characters the same ladder flattened
out from 57 thousand parameters on). The pure power law's slope is the
steadier number. Neither is Kaplan's 0.076: their losses are per BPE
token of web text, their ladder went up to 1.5 billion parameters (2,000
times our largest) and, for `L(N)`, the models trained close to
convergence on 22 billion tokens. Here every model reads 1.6 million
characters, so the larger ones are far from converged (Hoffmann et al.
2022 put the compute-optimal ratio near 20 tokens per parameter; the
largest here gets 2) and this `L(N)` is really `L(N, D)` at one small D.
The frontier inherits a bias Kaplan's had too: a checkpoint in the
middle of a run has not had its learning rate decayed, so it sits above
what a run stopped there on purpose would reach; and its first points
come from the first few dozen steps, before any model has learned more
than which characters are common, where no power law is expected. And
6·N·D leaves out attention over the context, about
`2·layers·context·width` operations per token forward against 2·N for
the weights: `context / (12·width)` more, a third more for the narrowest
models here (context 128, width 32) and a twelfth for the widest;
Kaplan's widths made it negligible.
"""
print(f"{keras.backend.backend()} done in {time.time() - start:.0f}s")
