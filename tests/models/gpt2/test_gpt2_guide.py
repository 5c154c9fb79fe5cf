"""guides/gpt2.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1: a
1-layer random GPT-2, a few passages): training with perplexity, every
sampler, the key/value cache against the uncached loop, classification.
Once per suite (one backend's pass (KZOO_ONCE_BACKEND)): it starts a fresh
interpreter."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("gpt2.py", timeout=900)
    tail = text[-3000:]
    assert "a random GPT-2: 1 layers, hidden 32" in text
    # A random model's perplexity is about the vocabulary size (50,257).
    found = re.search(r"held-out perplexity: ([\d,]+\.\d) before, "
                      r"([\d,]+\.\d) after", text)
    assert found, tail
    before = float(found[1].replace(",", ""))
    assert 30_000 < before < 80_000, before
    for name in ("greedy", "top-k (k=10)", "top-p (p=0.9)",
                 "temperature 0.7", "temperature 1.5", "beam (4 beams)"):
        assert re.search(re.escape(name) + r" *\| '", text), name
    assert "cached and uncached give the same text: True" in text
    assert re.search(r"cached \d+\.\d\ds, uncached \d+\.\d\ds", text), tail
    assert re.search(r"held-out accuracy \d+\.\d% \(majority-class baseline "
                     r"\d+\.\d%\)", text), tail
    assert f"{keras.backend.backend()} done" in text
