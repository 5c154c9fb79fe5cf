"""guides/serving.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1:
a tiny random BERT, one short epoch, 50 requests): export, a server in a
process that never imports kzoo, the served logits equal to predict's,
latency percentiles, shutdown. Once per suite, on TensorFlow (export runs
on TensorFlow and JAX; the once pass may be torch's)."""

import re

import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("serving.py", timeout=600, backend="tensorflow")
    assert "trained on 32 passages (tensorflow backend)" in text
    assert "the server imported of kzoo and keras-hub: []" in text
    difference = re.search(r"served vs predict: max abs difference (\S+)",
                           text)
    assert difference and float(difference.group(1)) <= 1e-5, text[-3000:]
    assert re.search(r"50 requests: p50 [\d.]+ ms, p95 [\d.]+ ms", text)
    assert "server stopped (exit code 0)" in text
    assert "tensorflow done" in text
