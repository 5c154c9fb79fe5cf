"""guides/scaling_laws.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: three tiny character-level GPT-2s, a few steps
each): every model trains and is scored on the held-out novel, compute
is 6·N·D, both fits run on the points there are, and the plot is saved
in the directory the guide runs from. Once per suite: it starts a fresh
interpreter."""

import math
import re

import keras
import matplotlib.image
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot goes to the current directory
    text = run_guide_smoke("scaling_laws.py", timeout=600)
    tail = text[-3000:]
    budget = re.search(r"(\d+) characters; [\d,]+ training characters, of "
                       r"which each model reads ([\d,]+); ([\d,]+) held-out",
                       text)
    assert budget, tail
    vocabulary = int(budget[1])
    tokens = int(budget[2].replace(",", ""))
    rows = re.findall(r"^ +(\d) +(\d+) +([\d,]+) +(\d\.\d{3}) +(\d\.\d{3}) +"
                      r"(\S+) +\d+s$", text, re.M)
    assert [(int(r[0]), int(r[1])) for r in rows] == [(1, 16), (1, 32),
                                                      (2, 48)], tail
    for layers, width, n, loss, bits, compute in rows:
        n, loss = int(n.replace(",", "")), float(loss)
        # N leaves the embeddings out: 12·layers·width² and the biases
        # and layer norms (13·width per layer, 2·width for the last norm).
        assert n == int(layers) * (12 * int(width) ** 2 + 13 * int(width)) \
            + 2 * int(width)
        assert float(compute) == pytest.approx(6 * n * tokens, rel=1e-2)
        assert abs(float(bits) - loss / math.log(2)) < 2e-3
        # A few steps already beat guessing among the characters.
        assert loss < math.log(vocabulary), (loss, vocabulary)
    for name in ("N", "C"):
        fitted = re.search(rf"^L\({name}\) = (\d+\.\d{{3}}) \+ \S+ / "
                           rf"{name}\^(-?\d+\.\d{{3}})$", text, re.M)
        assert fitted, tail
        assert re.search(rf"pure power law \(E = 0\): L\({name}\) ~ "
                         rf"{name}\^--?\d+\.\d{{3}}", text), tail
    frontier = re.search(r"compute frontier: (\d+) of 6 checkpoints", text)
    assert frontier and 3 <= int(frontier[1]) <= 6, tail  # 3 unknowns

    plot = tmp_path / "scaling_laws.png"
    assert f"plots saved to {plot}" in text
    image = matplotlib.image.imread(plot)
    assert image.shape[:2] == (400, 1100)  # 11 x 4 inches at 100 dpi
    assert image.std() > 0  # something is drawn
    assert f"{keras.backend.backend()} done" in text
