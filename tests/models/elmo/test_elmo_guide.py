"""guides/elmo.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1):
the original biLM converted and reproduced, stateless padding, ELMo
vectors, a biLM pretrained on Austen, and a classifier on frozen
features. About 100 s of CPU on torch."""

import re

import keras
import pytest

from helpers import run_guide_smoke


def _number(pattern, text):
    found = re.search(pattern, text)
    assert found, text[-3000:]
    return [float(g) for g in found.groups()]


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("elmo.py", timeout=1200)
    stateful, stateless = _number(
        r"original TensorFlow biLM: stateful (\S+), stateless (\S+)", text)
    assert stateful <= 1e-5 < 1e-3 < stateless
    [padding] = _number(r"vs alone: (\S+)", text)
    assert padding <= 1e-5
    token, top = _number(r"token layer differs by (\S+), top LSTM layer "
                         r"by (\S+)", text)
    assert token == 0.0 < 0.1 < top  # context changes only the LSTM layers
    forward_before, forward_after, backward_before, backward_after = \
        _number(r"forward (\d+) -> (\d+), backward (\d+) -> (\d+)", text)
    assert forward_after < 0.2 * forward_before
    assert backward_after < 0.2 * backward_before
    pretrained, random = _number(r"pretrained biLM (\S+), the same biLM "
                                 r"random (\S+)", text)
    assert pretrained >= 0.65 and random > 0.5  # majority: 0.50
    assert f"{keras.backend.backend()} done" in text
