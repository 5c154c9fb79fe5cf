"""guides/pretraining_at_scale.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: a tiny model, a few steps): a vocabulary trained on
the bundled novels, the corpus and its unigram entropy, the two
pretraining runs with the held-out loss printed beside the entropy, the
plot, the pooled features' spread, fine-tuning from pretrained and from
random weights over two seeds with standard errors (the rate chosen on
a validation split), ELECTRA against masked LM at equal FLOPs, and
all-MiniLM-L6-v2 continued on the novels. Once per suite
(one backend's pass, KZOO_ONCE_BACKEND): it starts a fresh interpreter.
The full run's numbers are the documentation's, not this test's."""

import re

import keras
import pytest

from helpers import run_guide_smoke

NUMBER = r"-?\d+\.\d+"


@pytest.mark.once
def test_guide_smoke_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot is written to the cwd
    text = run_guide_smoke("pretraining_at_scale.py", timeout=900)
    tail = text[-3000:]
    assert re.search(r"^vocabulary: 400 WordPiece pieces", text, re.M), tail
    assert re.search(r"^corpus: [\d,]+ paragraphs, [\d,]+ tokens; 8 "
                     r"paragraphs held out", text, re.M), tail
    entropy = re.search(rf"^unigram entropy ({NUMBER}) nats .* alone score "
                        rf"({NUMBER}) on the held-out text; goal \(a\): a "
                        rf"held-out MLM loss below ({NUMBER})", text, re.M)
    assert entropy, tail
    assert float(entropy.group(3)) == pytest.approx(
        float(entropy.group(1)) - 1.5, abs=2e-3)
    # kzoo pretrain's own line at each evaluation, with the same entropy;
    # two steps from random weights is on (above) the plateau: warned.
    assert f"the corpus' unigram entropy {entropy.group(1)} nats" in text
    assert "warning: the model predicts no better than word frequencies" \
        in text

    for run, steps in (("mlm", 6), ("plateau", 2)):
        assert re.search(rf"^{run}: {steps} steps x 256 tokens = .* TFLOPs,"
                         rf" {NUMBER} min training \(median [\d,]+ real "
                         rf"tokens/s\); held-out MLM loss {NUMBER}, "
                         rf"{NUMBER} (below|above) the unigram entropy",
                         text, re.M), tail
    assert re.search(r"^goal \(a\), >= 1.5 nats below the unigram entropy: "
                     rf"{NUMBER} -> (met|not met)", text, re.M), tail
    assert (tmp_path / "pretraining_transfer.png").stat().st_size > 0
    for name in ("random weights", "plateau run", "recipe run"):
        assert re.search(rf"^pooled features, {name}: spread {NUMBER}, "
                         rf"mean cosine {NUMBER}", text, re.M), tail
    for task in ("word order", "which novel"):
        assert re.search(rf"^{task}: \d+ passages to fit, \d+ to choose the "
                         rf"rate, \d+ held out \(majority class \d+\.\d%\)",
                         text, re.M), (task, tail)
        for name in ("random weights", "pretrained"):
            assert re.search(rf"^{task}, {name}: rate [\d.e-]+ \(validation "
                             r".*\); held-out accuracy \d+\.\d% \+/- \d+\.\d "
                             r"\(mean of 2 seeds", text, re.M), (task, name, tail)
        assert re.search(rf"^{task}: pretrained - random weights [-+]\d+\.\d "
                         rf"points \(\+/- \d+\.\d\)", text, re.M), (task, tail)
    for task, name in [("word order", "masked LM"), ("word order", "ELECTRA")] + [
            (task, name) for task in ("word order", "which novel")
            for name in ("MiniLM as it is", "MiniLM continued on the novels")]:
        assert re.search(rf"^{task}, {name}: rate [\d.e-]+ \(validation "
                         r".*\); held-out accuracy \d+\.\d% \+/- \d+\.\d "
                         r"\(mean of 2 seeds", text, re.M), (task, name, tail)
    assert re.search(r"^goal \(b\), >= 5 points above random weights on "
                     r"word order: [-+]\d+\.\d -> (met|not met)", text,
                     re.M), tail
    # Section 6: the masked-LM run gets the steps ELECTRA's FLOPs buy.
    equal = re.search(rf"^equal compute: ELECTRA 4 steps x ({NUMBER}) "
                      rf"MFLOPs a token, masked LM (\d+) steps x ({NUMBER})",
                      text, re.M)
    assert equal, tail
    # (the printed MFLOPs are rounded to 3 decimals)
    assert abs(int(equal.group(2)) - 4 * float(equal.group(1))
               / float(equal.group(3))) <= 1, equal.group(0)
    assert re.search(r"^ELECTRA - masked LM at equal compute, word order: [-+]\d+\.\d "
                     r"points", text, re.M), tail
    # Section 7: all-MiniLM-L6-v2 continued with masked LM.
    assert re.search(rf"^MiniLM continued: held-out MLM loss {NUMBER} at "
                     rf"step \d+ -> {NUMBER} at step 2", text, re.M), tail
    for task in ("word order", "which novel"):
        assert re.search(rf"^continued - as it is, {task}: [-+]\d+\.\d "
                         r"points", text, re.M), (task, tail)
    assert f"{keras.backend.backend()} done" in text
