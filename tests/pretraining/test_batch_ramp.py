"""`--batch-ramp START:STEPS` (issue 50, kzoo/pretraining/batch_ramp.py):
the batch grows linearly from START to the batch size in steps of START
(GPT-3 appendix B, Cramming); on this backend a ramped run with gradient
accumulation killed after a checkpoint and resumed trains what the
uninterrupted one trains (<= 1e-6), and its first steps are, loss for
loss, a run at START examples (the same examples, masks and global token
count); bad ramps are one line each."""

import pytest

import pretraining_testing
from kzoo.pretraining.batch_ramp import BatchRamp
from kzoo.pretraining.config import PretrainingError
from kzoo.pretraining.run import pretrain

from test_resume import (Killed, assert_same_run, kill_after_checkpoint,
                         losses, records)

LENGTH = 32
# 2 examples a micro-batch for steps 0 and 1, 4 from step 2 on; two
# micro-batches a step; a constant rate, so that a 2-step run at batch 2
# has the ramped run's first rates.
OPTIONS = dict(objective="mlm", from_scratch=True, max_steps=4,
               batch_size=4, gradient_accumulation_steps=2,
               batch_ramp="2:2", sequence_length=LENGTH, checkpoint_every=2,
               learning_rate=1e-3, schedule="constant", warmup_steps=0,
               seed=5, verbose=0)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("batch_ramp")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus", preset)
    return root, str(preset), str(corpus)


@pytest.fixture(scope="module")
def ramped(tiny):
    root, preset, corpus = tiny
    pretrain(preset, corpus, root / "whole", **OPTIONS)
    return root / "whole"


@pytest.mark.once
def test_the_batch_grows_linearly_in_steps_of_start():
    # 8 -> 32 over 100 steps: 8 (1 + floor(3s / 100)), by hand.
    ramp = BatchRamp(8, 100, 32)
    rows = [ramp.rows(step) for step in range(120)]
    assert rows == [8] * 34 + [16] * 33 + [24] * 33 + [32] * 20
    # The stream counts micro-batches: two a step.
    accumulating = BatchRamp(8, 100, 32, accumulation=2)
    assert [accumulating.rows_of_batch(i) for i in (66, 67, 68, 200)] == \
        [8, 8, 16, 32]


@pytest.mark.once
@pytest.mark.parametrize("ramp, words", [
    ("8", ["START:STEPS", "'8'"]),
    ("0:10", ["START:STEPS", ">= 1"]),
    ("a:b", ["START:STEPS"]),
    ("5:10", ["START (5)", "divide it", "16"]),
    ("32:10", ["START (32)", "below the batch size (32)"]),
])
def test_a_bad_ramp_is_one_clear_line(tiny, ramp, words):
    _, preset, corpus = tiny
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, tiny[0] / "bad", max_steps=10,
                 batch_size=32, batch_ramp=ramp)
    message = str(error.value)
    assert "\n" not in message
    for word in words:
        assert word in message, message
    assert not (tiny[0] / "bad").exists()


def test_a_ramped_run_resumed_equals_the_uninterrupted_one(tiny, ramped,
                                                           monkeypatch):
    root, preset, corpus = tiny
    # The ramp is real: steps 1-2 train on 2 x 2 rows, 3-4 on 4 x 2.
    tokens = [r["tokens"] for r in records(ramped) if "loss" in r]
    assert max(tokens[:2]) <= 2 * 2 * LENGTH < min(tokens[2:]), tokens
    output = root / "killed"
    kill_after_checkpoint(monkeypatch, 2)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **OPTIONS)
    monkeypatch.undo()
    assert pretrain(preset, corpus, output, **OPTIONS)["resumed_from"] == 2
    assert_same_run(output, ramped, steps=4)
    # A ramp added to (or dropped from) a run is another run.
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **dict(OPTIONS, batch_ramp=None))
    assert "batch_ramp: [2, 2] there, None now" in str(error.value)


@pytest.mark.once
def test_the_ramps_first_steps_are_a_run_at_its_start(tiny, ramped):
    root, preset, corpus = tiny
    small = root / "small"
    pretrain(preset, corpus, small, **dict(
        OPTIONS, batch_ramp=None, batch_size=2, max_steps=2))
    got, want = losses(ramped), losses(small)
    assert abs(got[1] - want[1]) <= 1e-6 and abs(got[2] - want[2]) <= 1e-6
