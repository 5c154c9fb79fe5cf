"""guides/pretraining_bert.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tinier random BERT, a few sentence pairs): sentence
pairs, the masking strategies, pretraining from the loss of a random
model, fill-mask. Once per suite (one backend's pass (KZOO_ONCE_BACKEND)): it starts a
fresh interpreter."""

import math
import re

import keras
import pytest

from helpers import run_guide_smoke

NUMBER = r"(\d+\.\d+)"


def masked_pieces(text, label):
    """The pieces of the guide's masked example after `label`: (shown,
    chosen, original) each; a chosen piece prints as <shown|original>."""
    line = re.search(rf"^{re.escape(label)}: (.*)$", text, re.M)
    assert line, text[-3000:]
    pieces = []
    for piece in line.group(1).split(" "):
        if piece.startswith("<") and piece.endswith(">") and "|" in piece:
            shown, original = piece[1:-1].rsplit("|", 1)
            pieces.append((shown, True, original))
        else:
            pieces.append((piece, False, piece))
    return pieces


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("pretraining_bert.py", timeout=900)
    assert re.search(r"\d+ paragraphs, \d+ sentence pairs; training on 64, "
                     r"32 held out", text), text[-3000:]
    assert re.search(r"-> label [01]\n", text)

    for masking in ("token", "whole_word", "span"):
        found = re.search(rf"{masking} masking \((\d+) of (\d+) pieces\)",
                          text)
        assert found, text[-3000:]
        chosen, total = int(found.group(1)), int(found.group(2))
        assert 0 < chosen <= math.ceil(0.15 * total) + 1, found.group(0)
        pieces = masked_pieces(text, found.group(0))
        assert sum(c for _, c, _ in pieces) == chosen
        if masking != "token":
            # Whole words: a continuation piece goes with the piece before.
            for (_, before, _), (_, chosen_now, original) in zip(pieces,
                                                                 pieces[1:]):
                if original.startswith("##"):
                    assert chosen_now == before, pieces
    # Dynamic masking: the same sentence, two different draws.
    draws = re.findall(r"^dynamic masking, draw \d: (.*)$", text, re.M)
    assert len(draws) == 2 and draws[0] != draws[1], draws
    assert all(re.search(r"<[^ |]+\|[^ >]+>", d) for d in draws), draws

    # A random model's loss is ln(vocabulary); training lowers it.
    before = re.search(rf"before training: held-out MLM loss {NUMBER} "
                       rf"\(ln 30,522 = 10\.33\), NSP loss {NUMBER}", text)
    assert before, text[-3000:]
    assert abs(float(before.group(1)) - math.log(30522)) < 0.3
    assert abs(float(before.group(2)) - math.log(2)) < 0.1
    assert len(re.findall(rf"^epoch \d: MLM loss {NUMBER}, MLM accuracy "
                          rf"{NUMBER}, NSP accuracy {NUMBER}$", text,
                          re.M)) == 2
    after = re.search(rf"after training: held-out MLM loss {NUMBER}", text)
    assert after and float(after.group(1)) < float(before.group(1)), \
        text[-3000:]

    five = r"\S+ \d\.\d\d(, \S+ \d\.\d\d){4}"
    assert re.search(rf"She could not \[MASK\] him\. -> {five}\n", text), \
        text[-3000:]
    assert re.search(rf"Anne walked to the \[MASK\] with her sister\. -> "
                     rf"{five}\n", text), text[-3000:]
    assert f"{keras.backend.backend()} done" in text
