"""guides/multilingual.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny random XLM-R with a SentencePiece vocabulary
learnt from the guide's sentences): the parallel set, fine-tuning on
English, scores in English, French and German, and the transfer gap.
Once per suite: it starts a fresh interpreter."""

import re

import keras
import pytest

from helpers import run_guide_smoke

LANGUAGES = ("English", "French", "German")


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("multilingual.py", timeout=900)
    tail = text[-3000:]
    assert ("32 English training sentences; 16 held-out sentences in each "
            "of English, French, German; majority-class baseline 0.500"
            in text)
    for language in LANGUAGES:
        assert re.search(rf"^{language}: \d+ pieces for ", text, re.M), tail
    run = re.search(r"^seed 0: final training loss \d+\.\d{3}; held-out "
                    r"accuracy: English (\d\.\d{3}), French (\d\.\d{3}), "
                    r"German (\d\.\d{3})", text, re.M)
    assert run, tail
    # One run: each mean is that run's score, and the gaps are differences.
    for language, score in zip(LANGUAGES, run.groups()):
        assert re.search(rf"^{language}: mean accuracy {score}", text,
                         re.M), tail
    for language, score in zip(LANGUAGES[1:], run.groups()[1:]):
        gap = float(run.group(1)) - float(score)
        assert f"{language}: mean accuracy {score} (gap to English " \
            f"{gap:+.3f})" in text
    assert f"{keras.backend.backend()} done" in text
