"""guides/seq2seq_fine_tuning.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a one-layer random BART with GPT-2's BPE in BART's
layout, a few Austen sentences): the punctuation-restoration pairs, the
two baselines, the model before and after `fit`, and the examples. Once
per suite: it starts a fresh interpreter."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("seq2seq_fine_tuning.py", timeout=900)
    tail = text[-3000:]
    assert "16 training pairs, 8 held out" in text
    # The inputs are the targets lowercased, without punctuation.
    pair = re.search(r"^input:  (.+)\ntarget: (.+)$", text, re.M)
    assert pair, tail
    source, target = pair.groups()
    assert source == source.lower() and not re.search(r"[.,;:!?]", source)
    assert source.split()[-1] in target.lower()
    rows = {}
    for name in ("copy the input", "rule: capitals + full stop",
                 "BART before fine-tuning", "BART fine-tuned"):
        found = re.search(rf"^{re.escape(name)} +(\d\.\d{{3}})  (\d\.\d{{3}})$",
                          text, re.M)
        assert found, (name, tail)
        rows[name] = float(found.group(1))
    # The copy baseline errs only on case and punctuation: some words,
    # not all; the rule fixes the first word and the final stop.
    assert 0 < rows["copy the input"] < 1
    assert rows["rule: capitals + full stop"] < rows["copy the input"]
    assert re.search(r"fine-tuned in \d+s; loss per epoch: \d+\.\d{3}",
                     text), tail
    assert len(re.findall(r"^Austen: ", text, re.M)) == 3
    assert f"{keras.backend.backend()} done" in text
