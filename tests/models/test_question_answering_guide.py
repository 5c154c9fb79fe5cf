"""guides/question_answering.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random BERT, a few questions): data, model,
baselines, fit, answers, scores and windows. About 12 s of CPU on torch."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("question_answering.py", timeout=1200)
    assert re.search(r"16 training questions, 8 test questions", text)
    scores = re.search(r"fine-tuned: EM (\d+\.\d) F1 (\d+\.\d)", text)
    assert scores, text[-3000:]
    # The answers are spans of their contexts, located by characters.
    best = re.search(r"best span: characters (\d+)\.\.(\d+): '", text)
    assert best and int(best.group(1)) < int(best.group(2)), text[-3000:]
    assert f"{keras.backend.backend()} done" in text
