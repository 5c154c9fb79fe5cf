"""guides/token_classification.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random BERT, a few sentences): data, word
pieces and their labels, baseline, fit, entity scores, tagging. Once per
suite (one backend's pass (KZOO_ONCE_BACKEND)): it starts a fresh interpreter."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("token_classification.py", timeout=900)
    assert "32 training sentences, 16 test sentences" in text
    # The label sits on each word's first piece; "mr." is two pieces.
    assert "pieces: ['[CLS]', 'mr', '.', 'darcy', 'walked', '[SEP]']" in text
    assert "labels: [0, 1, 0, 2, 0, 0] weights: [0.0, 1.0, 0.0, 1.0, 1.0, " \
        "0.0]" in text
    assert re.search(r"fine-tuned: precision \d\.\d{3} recall \d\.\d{3} "
                     r"F1 \d\.\d{3}", text), text[-3000:]
    tagged = re.search(r"\[\('Elizabeth', '([A-Z-]+|O)'\)", text)
    assert tagged, text[-3000:]
    assert f"{keras.backend.backend()} done" in text
