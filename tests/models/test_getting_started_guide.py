"""guides/getting_started.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: real all-MiniLM-L6-v2 weights, a few passages, one
short epoch): presets, the three backends' numbers, semantic search,
fill-mask, a fine-tuned classifier. Once per suite (one backend's
pass): it starts fresh interpreters, one per backend."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("getting_started.py", timeout=900)
    tail = text[-3000:]
    assert re.search(r"\d+ presets in \d+ families: .*\bbert\b.*\bgpt2\b",
                     text), tail
    assert "all_minilm_l6_v2: 6 layers, hidden 384, 22,713,216 parameters" \
        in text
    # The same sentence on the two other backends, in subprocesses, agrees
    # with this one to float32 rounding.
    others = re.findall(r"(tensorflow|jax|torch) +first numbers:(?: [+-]"
                        r"\d\.\d{6}){4} +max abs difference (\S+)", text)
    assert sorted(b for b, _ in others) == sorted(
        b for b in ("tensorflow", "jax", "torch")
        if b != keras.backend.backend()), tail
    assert all(float(diff) <= 1e-5 for _, diff in others), others
    # Semantic search on real weights: a paraphrase scores far above an
    # unrelated sentence.
    pair = re.search(r"similar sentences (\d\.\d{3}), unrelated "
                     r"(-?\d\.\d{3})", text)
    assert pair and float(pair[1]) > float(pair[2]) + 0.3, tail
    assert re.search(r"query: Lydia runs away with Wickham\.\n  "
                     r"\d\.\d{3}  \S", text), tail
    assert re.search(r"\[MASK\] man\. -> \S+ \d\.\d{4}, .*\(a random head: "
                     r"noise\)", text), tail
    assert re.search(r"held-out accuracy \d+\.\d% \(majority-class baseline "
                     r"\d+\.\d%\)", text), tail
    assert f"{keras.backend.backend()} done" in text
