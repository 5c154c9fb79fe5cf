"""Fine-tune the pretraining guide's recipe run and random weights with a
longer protocol than the guide's (16 epochs, a 10% warmup then cosine
decay), 5 seeds a rate, on the guide's which-novel split; prints each
model's validation and held-out accuracy per rate.

    KERAS_BACKEND=torch python scripts/fine_tune_transfer_probe.py \
        runs/guide2 16 1e-4,3e-4

The first argument is the guide's --work folder (after its section 2).
Why a script beside the guide: it asks whether goal (b)'s shortfall is
the guide's short fine-tuning (80 steps, no warmup) or the pretrained
encoder itself; docs/pretraining_at_scale.md reports its answer.
"""
import os, sys, math
os.environ.setdefault("KERAS_BACKEND", "torch")
import numpy as np, keras, kzoo
from kzoo import datasets
WORK = sys.argv[1]
EPOCHS = int(sys.argv[2])
RATES = [float(r) for r in sys.argv[3].split(",")]
(train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
    ("northanger_abbey", "persuasion"), words=48, per_novel=400, test_fraction=0.5, seed=0)
n = int(0.8 * len(train_x))
fit = (train_x[:n], train_y[:n])
val = (train_x[n:], train_y[n:])
pre = kzoo.BertPreprocessor.from_preset(WORK + "/mlm/preset", sequence_length=64)
def run(pretrained, rate, seed):
    keras.utils.set_random_seed(seed)
    c = kzoo.BertTextClassifier.from_preset(WORK + "/mlm/preset", num_classes=2,
        preprocessor=pre, load_weights=pretrained)
    steps = EPOCHS * math.ceil(n / 16)
    sched = keras.optimizers.schedules.CosineDecay(0.0, steps - steps // 10,
        warmup_target=rate, warmup_steps=steps // 10)
    c.compile(optimizer=keras.optimizers.AdamW(sched),
              loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    c.fit(*fit, batch_size=16, epochs=EPOCHS, verbose=0)
    out = []
    for x, y in (val, (test_x, test_y)):
        p = np.argmax(c.predict(x, batch_size=64, verbose=0), -1)
        out.append(100 * float(np.mean(p == y)))
    return out
for pretrained in (False, True):
    for rate in RATES:
        r = [run(pretrained, rate, s) for s in range(5)]
        v = [a for a, _ in r]
        t = [b for _, b in r]
        print(f"pretrained={pretrained} epochs={EPOCHS} rate={rate:g} val {np.mean(v):.1f} test {np.mean(t):.1f} +/- {np.std(t, ddof=1)/math.sqrt(5):.1f} {t}", flush=True)
