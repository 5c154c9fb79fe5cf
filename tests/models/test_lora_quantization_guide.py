"""guides/lora_and_quantization.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random BERT, a few passages, one seed): full
fine-tuning and LoRA each train in their own process and report accuracy,
step time and memory; LoRA trains exactly the adapters and the head; the
LoRA classifier, saved whole, quantizes to int8, saves and loads and
prints their sizes. Once per suite: it starts fresh interpreters."""

import re
import statistics
from pathlib import Path

import keras
import pytest

from helpers import run_guide_smoke
from script_loading import load_script

# The smoke run's BERT: 2 layers, hidden 16, feed-forward 32, 3 classes;
# LoRA's rank 8.
LAYERS, HIDDEN, INTERMEDIATE, CLASSES, RANK = 2, 16, 32, 3, 8


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("lora_and_quantization.py", timeout=900)
    tail = text[-3000:]
    for method in ("full", "lora"):
        run = re.search(rf"^{method:4} seed 0: held-out accuracy "
                        r"(\d\.\d{3}), (\d+) ms/step, peak RSS (\d+) MiB "
                        r"\((-?\d+) MiB added by training\)", text, re.M)
        assert run, tail
        assert float(run[2]) > 0 and float(run[3]) > 0, run[0]
    counts = {method: re.search(rf"^{method}: trains ([\d,]+) of ([\d,]+) "
                                r"parameters; held-out accuracy \d\.\d{3} "
                                r"\+- 0\.000 over 1 seeds", text, re.M)
              for method in ("full", "lora")}
    assert all(counts.values()), tail
    number = lambda s: int(s.replace(",", ""))  # noqa: E731
    full_trainable, full_total = map(number, counts["full"].groups())
    lora_trainable, lora_total = map(number, counts["lora"].groups())
    # Full fine-tuning trains everything; LoRA (Hu et al.) adds
    # rank x (in + out) per projection it targets (the guide's: every
    # projection of the block, the attention's four and the feed-forward's
    # two), and trains those and the head (a Dense from the pooled output
    # to the classes) only.
    per_layer = (4 * RANK * (HIDDEN + HIDDEN)
                 + 2 * RANK * (HIDDEN + INTERMEDIATE))
    adapters = LAYERS * per_layer
    head = HIDDEN * CLASSES + CLASSES
    assert full_trainable == full_total
    assert lora_total == full_total + adapters
    assert lora_trainable == adapters + head == 3635
    share = re.search(r"LoRA against full fine-tuning: (0\.\d{4}) of the "
                      r"trainable parameters, accuracy [+-]\d+\.\d points, "
                      r"step time x\d+\.\d\d, peak RSS x\d\.\d\d", text)
    assert share, tail
    assert float(share[1]) == round(lora_trainable / full_trainable, 4)

    float_line = re.search(r"float32: held-out accuracy (\d\.\d{3}), "
                           r"weights (\d+\.\d\d) MiB", text)
    int8_line = re.search(r"int8: held-out accuracy (\d\.\d{3}), weights "
                          r"(\d+\.\d\d) MiB; largest probability change "
                          r"(\d\.\d{4}), same answer on (\d\.\d{3})", text)
    assert float_line and int8_line, tail
    # The LoRA run saved whole is the model quantized: its float accuracy
    # is the one the LoRA run reported.
    assert f"lora seed 0: held-out accuracy {float_line[1]}" in text
    # (The sizes are not compared: the tiny model's file is its float
    # embedding table and HDF5's overhead, 2.00 MiB either way.)
    assert float(int8_line[4]) > 0
    assert f"{keras.backend.backend()} done" in text


ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.once
def test_docs_quote_the_recorded_run():
    """docs/lora_and_quantization.md's table and gap are the guide's
    recorded full run (docs/runs/lora_and_quantization.txt, shown on the
    guide's page), number for number."""
    record_guide = load_script("scripts/record_guide.py")
    record = record_guide.read_record(
        record_guide.RUNS / "lora_and_quantization.txt")
    assert record["kind"] == "full", record["mode"]
    run = record["output"]
    page = (ROOT / "docs" / "lora_and_quantization.md").read_text(
        encoding="utf-8")
    scores = {method: re.search(
        rf"^{method}: trains ([\d,]+) of [\d,]+ parameters; held-out "
        r"accuracy (\d\.\d{3}) \+- (\d\.\d{3}) over 5 seeds", run, re.M)
        for method in ("full", "lora")}
    against = re.search(
        r"^LoRA against full fine-tuning: 0\.(\d\d)(\d\d) of the trainable "
        r"parameters, accuracy ([+-]\d\.\d) points \(standard error (\d\.\d) "
        r"over 5 paired seeds\), step time x(\d\.\d\d), peak RSS "
        r"x(\d\.\d\d)", run, re.M)
    assert all(scores.values()) and against, "the record changed shape"
    full, lora = scores["full"], scores["lora"]
    assert re.search(rf"^\| full fine-tuning: .* \| {full[1]} parameters \| "
                     rf"{full[2]} \({full[3]}\) \| 1 \| 1 \|$", page, re.M)
    share = f"{int(against[1])}.{against[2]}%"
    assert re.search(
        rf"^\| LoRA rank 8 on every projection .* \| {lora[1]} \({share}\) "
        rf"\| {lora[2]} \({lora[3]}\) \| x{against[5]} \| x{against[6]} \|$",
        page, re.M), "the page's LoRA row differs from the record"
    text = " ".join(page.split())
    gap = float(against[3])
    side = "below" if gap < 0 else "above"
    assert f"LoRA is **{abs(gap):.1f} points {side}** full fine-tuning" in text
    assert f"standard error of the paired mean {against[4]})" in text
    # The per-seed differences the page lists.
    seeds = re.findall(r"^(full|lora) seed (\d): held-out accuracy "
                       r"(\d\.\d{3})", run, re.M)
    accuracy = {(method, seed): float(value) for method, seed, value in seeds}
    differences = [100 * (accuracy["lora", s] - accuracy["full", s])
                   for s in "01234"]
    listed = ", ".join(f"{d:+.1f}" for d in differences)
    assert f"per seed {listed};" in text, listed
    # The 95% interval the page states: Student's t with 4 degrees of
    # freedom (2.776) over the per-seed differences.
    mean = statistics.mean(differences)
    half = 2.776 * statistics.stdev(differences) / len(differences) ** 0.5
    assert (f"a 95% interval from {mean - half:+.1f} to {mean + half:+.1f} "
            "points") in text
