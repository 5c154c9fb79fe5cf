"""guides/in_context_learning.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a one-layer random GPT-2 with the real tokenizer, a
few passages): prompts with 0, 1 and 4 shots scored by the label tokens'
log-likelihood, a GPT2Classifier fine-tuned on the same labels, and the
plot saved as a PNG in the directory the guide runs from. Once per
suite: it starts a fresh interpreter."""

import re

import keras
import matplotlib.image
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot goes to the current directory
    text = run_guide_smoke("in_context_learning.py", timeout=900)
    tail = text[-3000:]
    assert re.search(r"\d+ training passages to draw from, 8 held out",
                     text), tail
    # The one-shot prompt printed: instruction, one solved example, the
    # open question.
    assert re.search(r"Is each passage speech or narration\?\n\n"
                     r"Passage: .+\nAnswer: (speech|narration)\n\n"
                     r"Passage: .+\nAnswer:\n", text), tail
    for k in (0, 1, 4):
        found = re.search(rf"^{k}-shot prompting: accuracy (\d\.\d{{3}}) "
                          r"\(draws: (\d\.\d{3})\)", text, re.M)
        assert found, (k, tail)
        assert found.group(1) == found.group(2)  # one draw: its own mean
    assert re.search(r"fine-tuned on 8 examples: accuracy \d\.\d{3}",
                     text), tail
    plot = tmp_path / "in_context_learning.png"
    assert f"plot saved to {plot}" in text
    image = matplotlib.image.imread(plot)
    assert image.shape[:2] == (400, 700)  # 7 x 4 inches at 100 dpi
    assert image.std() > 0
    assert f"{keras.backend.backend()} done" in text
