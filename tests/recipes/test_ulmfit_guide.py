"""guides/ulmfit.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1):
the three ULMFiT stages and the from-scratch baseline. Each language-model
stage must lower the target text's perplexity. About 35 s of CPU on torch
(the smoke sizes were cut for this from 115 s)."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("ulmfit.py", timeout=1200)
    found = re.search(r"random (\d+), after general LM (\d+), after target "
                      r"fine-tuning (\d+)", text)
    assert found, text[-3000:]
    random_lm, general, target = map(int, found.groups())
    assert random_lm > general > target
    assert re.search(r"ULMFiT \d\.\d+, from scratch \d\.\d+", text)
    assert f"{keras.backend.backend()} done" in text
