"""guides/ulmfit.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1):
the three ULMFiT stages and the from-scratch baseline. Each language-model
stage must lower the target text's perplexity. Marked large: the smoke run
takes minutes on a loaded CPU."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.large
def test_guide_smoke_run():
    text = run_guide_smoke("ulmfit.py", timeout=1200)
    found = re.search(r"random (\d+), after general LM (\d+), after target "
                      r"fine-tuning (\d+)", text)
    assert found, text[-3000:]
    random_lm, general, target = map(int, found.groups())
    assert random_lm > general > target
    assert re.search(r"ULMFiT \d\.\d+, from scratch \d\.\d+", text)
    assert f"{keras.backend.backend()} done" in text
