"""guides/ulmfit.py runs end to end in its smoke mode (KZOO_GUIDE_SMOKE=1):
the three ULMFiT stages and the from-scratch baseline. Each language-model
stage must lower the target text's perplexity. Marked large: the smoke run
takes minutes on a loaded CPU."""

import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "guides" / "ulmfit.py"


@pytest.mark.large
def test_guide_smoke_run():
    env = {**os.environ, "KERAS_BACKEND": keras.backend.backend(),
           "KZOO_GUIDE_SMOKE": "1", "TF_CPP_MIN_LOG_LEVEL": "3",
           "PYTHONPATH": os.pathsep.join([str(REPO),
                                          os.environ.get("PYTHONPATH", "")])}
    env.pop("XLA_FLAGS", None)
    output = subprocess.run([sys.executable, str(GUIDE)], env=env,
                            capture_output=True, text=True, timeout=1200)
    text = output.stdout + output.stderr
    assert output.returncode == 0, text[-3000:]
    found = re.search(r"random (\d+), after general LM (\d+), after target "
                      r"fine-tuning (\d+)", text)
    assert found, text[-3000:]
    random_lm, general, target = map(int, found.groups())
    assert random_lm > general > target
    assert re.search(r"ULMFiT \d\.\d+, from scratch \d\.\d+", text)
    assert f"{keras.backend.backend()} done" in text
