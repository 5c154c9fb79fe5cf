"""guides/question_answering.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random BERT, a few questions): data, model,
baselines, fit, answers, scores and windows. Marked large: the run takes
minutes on a loaded CPU."""

import os
import re
import subprocess
import sys
from pathlib import Path

import keras
import pytest

REPO = Path(__file__).resolve().parents[2]
GUIDE = REPO / "guides" / "question_answering.py"


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
    assert re.search(r"16 training questions, 8 test questions", text)
    scores = re.search(r"fine-tuned: EM (\d+\.\d) F1 (\d+\.\d)", text)
    assert scores, text[-3000:]
    # The answers are spans of their contexts, located by characters.
    best = re.search(r"best span: characters (\d+)\.\.(\d+): '", text)
    assert best and int(best.group(1)) < int(best.group(2)), text[-3000:]
    assert f"{keras.backend.backend()} done" in text
