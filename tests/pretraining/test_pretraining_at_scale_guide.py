"""guides/pretraining_at_scale.py runs end to end in its smoke mode
(KZOO_GUIDE_SMOKE=1: tiny models, a few steps): one corpus prepared from
the bundled novels for both models (a re-run up to date), the FLOPs-equal
step counts, MLM in process, `kzoo pretrain` killed with SIGKILL after its
first checkpoint and resumed with the same losses, the plot, fine-tuning
three classifiers. Once per suite (one backend's pass, KZOO_ONCE_BACKEND):
it starts a fresh interpreter and two `kzoo pretrain` processes."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # the plot is written to the cwd
    text = run_guide_smoke("pretraining_at_scale.py", timeout=900)
    tail = text[-3000:]
    assert re.search(r"^corpus: \d+ chapters, [\d,]+ tokens", text,
                     re.M), tail
    assert "prepared again: up to date = True" in text

    flops = dict(re.findall(r"^(mlm|rtd): [\d.]+ GFLOPs a step .*, (\d+) "
                            r"steps", text, re.M))
    assert flops["mlm"] == "10", tail
    # The ELECTRA step costs more, so it gets fewer (or as many) steps.
    assert 0 < int(flops["rtd"]) <= 10
    assert re.search(r"^MLM: 10 steps in \d+s .* held-out MLM loss "
                     r"\d+\.\d\d", text, re.M), tail

    killed = re.search(r"killed \(SIGKILL\) after step (\d+); checkpoints "
                       r"on disk: steps \[([\d, ]+)\]", text)
    assert killed, tail
    resumed = re.search(r"resumed from step (\d+): steps \[([\d, ]+)\] "
                        r"trained twice .* max \|loss difference\| (\S+)",
                        text)
    assert resumed, tail
    assert int(resumed.group(1)) == int(killed.group(2).split(",")[-1])
    assert int(killed.group(1)) > int(resumed.group(1))
    assert float(resumed.group(3)) <= 1e-6
    assert re.search(r"^RTD: \d+ steps in \d+s .* discriminator accuracy "
                     r"\d\.\d{3}", text, re.M), tail

    assert (tmp_path / "pretraining_at_scale.png").stat().st_size > 0
    for name in ("no pretraining", "MLM \\(BERT\\)", "RTD \\(ELECTRA\\)"):
        assert re.search(rf"^{name}: held-out accuracy \d+\.\d%", text,
                         re.M), tail
    assert re.search(r"at equal compute, (MLM \(BERT\)|RTD \(ELECTRA\)) "
                     r"fine-tunes better by", text)
    assert f"{keras.backend.backend()} done" in text
