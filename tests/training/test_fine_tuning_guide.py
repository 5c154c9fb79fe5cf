"""guides/fine_tuning_recipes.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random BERT, a few passages): the five
recipes (linear probe, full fine-tuning, layer-wise decay, slanted
triangular, gradual unfreezing) train and are scored against the
majority baseline, and the learning curves are saved as a PNG in the
directory the guide runs from. Once per suite: it starts a fresh
interpreter."""

import re

import keras
import matplotlib.image
import pytest

from helpers import run_guide_smoke

RECIPES = ("linear probe", "full fine-tuning (warmup + linear decay)",
           "layer-wise LR decay 0.8", "discriminative + slanted triangular",
           "+ gradual unfreezing")


@pytest.mark.once
def test_guide_smoke_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot goes to the current directory
    text = run_guide_smoke("fine_tuning_recipes.py", timeout=900)
    baseline = re.search(r"48 training passages, 12 held out; "
                         r"majority-class baseline (\d\.\d{3})", text)
    assert baseline, text[-3000:]
    # Two blocks and the embeddings under the head; the scales fall by
    # `decay` per group from the top.
    assert "4 layer groups: token_embedding, " in text
    assert "decay 0.800: scales 0.512 0.640 0.800 1.000" in text
    assert "decay 0.385: scales 0.057 0.148 0.385 1.000" in text
    for recipe in RECIPES:
        scored = re.search(rf"^{re.escape(recipe)}: held-out accuracy "
                           r"(\d\.\d{3}) \(epochs: (\d\.\d{3}) (\d\.\d{3})\)",
                           text, re.M)
        assert scored, text[-3000:]
        # The last epoch's score is the one reported.
        assert scored.group(1) == scored.group(3)
    assert f"majority-class baseline: {baseline.group(1)}" in text

    plot = tmp_path / "fine_tuning_recipes.png"
    assert f"learning curves saved to {plot}" in text
    assert plot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(plot)
    assert image.shape[:2] == (400, 1100)  # 11 x 4 inches at 100 dpi
    assert image.std() > 0  # something is drawn
    assert f"{keras.backend.backend()} done" in text
