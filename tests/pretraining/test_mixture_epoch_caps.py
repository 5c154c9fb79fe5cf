"""Epoch caps in a mixture (`--corpus books:0.3:epochs=4`,
kzoo/pretraining/streams/mixture.py): a capped corpus gives exactly its
epochs' examples and leaves; the others go on in their renormalised
shares, held from that moment; a restore from a checkpoint's (JSON)
state before or after the moment makes the same batches; when every
corpus is capped out the next batch is refused in one line that says
what to change, and raising a cap goes on from there. The stream checks
do not depend on the backend (once), nor does a raised cap's resume of
a `kzoo pretrain` run (once: the stream state and the run's identity).
The `kzoo pretrain` run that runs out runs on every backend: how the
refusal reaches the command goes through each backend's feeding of
`fit` (on TensorFlow tf.data wraps the stream's error in its own)."""

import json

import numpy as np
import pytest

import pretraining_testing
from kzoo.cli import main as kzoo_main
from kzoo.pretraining.config import PretrainingError, corpus_entries
from kzoo.pretraining.streams.mixture import (CorpusMixture,
                                              MixtureExhausted, make_stream)
from test_mixture import ID_BASE, SENTENCES, _write_corpus

# Sentences (the toy stream's examples) per epoch of each corpus:
# document d holds 1 + d % 3 sentences (test_mixture._write_corpus).
SMALL, MID = 6, 18


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("caps")
    return {"small": _write_corpus(root / "small", 0, 3),
            "large": _write_corpus(root / "large", 1, 40),
            "mid": _write_corpus(root / "mid", 3, 9)}


def _stream(folders, entries, batch_size=4, seed=0):
    mixture = CorpusMixture([(folders[name], *rest)
                             for name, *rest in entries])
    return make_stream(SENTENCES, None, mixture, batch_size, seed, 0, 1,
                       None, 0)


def _ids(stream, steps, start=0):
    return np.concatenate([stream.batch(step)[0]["first"]
                           for step in range(start, start + steps)])


def _assert_shares(corpus_of, weights):
    """Every prefix holds each corpus' share within one example."""
    examples = np.arange(1, len(corpus_of) + 1)
    for corpus, weight in weights.items():
        given = np.cumsum(corpus_of == corpus)
        assert np.max(np.abs(given - weight * examples)) <= 1, corpus


CAPPED = [("small", 0.2, 2), ("mid", 0.3), ("large", 0.5)]


@pytest.mark.once
def test_a_capped_corpus_leaves_and_the_others_share_its_place(folders):
    stream = _stream(folders, CAPPED)
    ids = _ids(stream, 30)
    corpus_of = ids // ID_BASE
    small = np.flatnonzero(corpus_of == 0)
    # Exactly its two epochs: each sentence once per epoch, then no more.
    assert len(small) == 2 * SMALL
    sentences = sorted({0, 100, 101, 200, 201, 202})
    assert sorted(ids[small[:SMALL]]) == sentences
    assert sorted(ids[small[SMALL:]]) == sentences
    # Before it leaves, the weights as given; after, 0.3 and 0.5
    # renormalised to 0.375 and 0.625, counted from the moment it left.
    left = small[-1] + 1
    _assert_shares(corpus_of[:left], {0: 0.2, 3: 0.3, 1: 0.5})
    _assert_shares(corpus_of[left:], {3: 0.375, 1: 0.625})
    progress = stream.progress()
    assert [p["examples"] for p in progress] == [
        12, np.sum(corpus_of == 3), np.sum(corpus_of == 1)]
    assert [p["epoch_cap"] for p in progress] == [2, None, None]
    assert progress[0]["epoch"] == 1  # from 0: its second and last
    # Uncapped, the same mixture keeps drawing from it.
    free = _ids(_stream(folders, [("small", 0.2), ("mid", 0.3),
                                  ("large", 0.5)]), 30)
    assert np.sum(free // ID_BASE == 0) == 24
    np.testing.assert_array_equal(free[:left], ids[:left])


@pytest.mark.once
@pytest.mark.parametrize("at", [-2, 0, 1, 3])
def test_a_restore_across_the_moment_a_corpus_leaves(folders, at):
    """States saved 2 batches before the batch in which `small` gives its
    last example, in it, and 1 and 3 batches after (JSON, as a
    checkpoint holds them) make the uninterrupted stream's batches."""
    whole = _stream(folders, CAPPED, seed=5)
    want = [whole.batch(step)[0] for step in range(24)]
    ids = np.concatenate([b["first"] for b in want])
    last_batch = np.flatnonzero(ids // ID_BASE == 0)[-1] // 4
    step = int(last_batch) + at
    first = _stream(folders, CAPPED, seed=5)
    _ids(first, step + 2)
    state = json.loads(json.dumps(first.state_before(step)))
    resumed = _stream(folders, CAPPED, seed=5)
    resumed.restore(state)
    for later in range(step, 24):
        got = resumed.batch(later)[0]
        for key in want[later]:
            np.testing.assert_array_equal(got[key], want[later][key])
    assert resumed.progress() == whole.progress()


@pytest.mark.once
def test_a_state_saved_before_caps_resumes_alike(folders):
    """A checkpoint from before epoch caps has no segment in its mixture
    state: the mixture resumes it as it always did."""
    weights = [("small", 0.3), ("large", 0.7)]
    whole = _stream(folders, weights, seed=1)
    want = _ids(whole, 12)
    first = _stream(folders, weights, seed=1)
    _ids(first, 5)
    state = first.state()
    del state["mixture"]["segment"]
    resumed = _stream(folders, weights, seed=1)
    resumed.restore(state)
    np.testing.assert_array_equal(_ids(resumed, 7, start=5), want[20:])


@pytest.mark.once
def test_every_corpus_capped_out_refuses_the_next_batch(folders):
    capped = [("small", 0.5, 1), ("mid", 0.5, 1)]
    stream = _stream(folders, capped)
    batches = (SMALL + MID) // 4
    ids = _ids(stream, batches)
    assert sorted(ids[ids < ID_BASE]) == [0, 100, 101, 200, 201, 202]
    assert len(set(ids[ids >= ID_BASE])) == MID
    before = stream.state()
    with pytest.raises(MixtureExhausted) as error:
        stream.batch(batches)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("Every corpus of the mixture has reached its "
                              f"epoch cap ({folders['small']}: 6 examples "
                              f"in 1 epoch; {folders['mid']}: 18 examples")
    assert f"they fill {batches} batches" in message
    assert f"Lower --max-steps to what {batches} batches make" in message
    # A cap raised on the saved state goes on: the mid corpus' 2nd epoch.
    raised = _stream(folders, [("small", 0.5, 1), ("mid", 0.5, 2)])
    raised.restore(json.loads(json.dumps(before)))
    more = _ids(raised, MID // 4, start=batches)
    assert np.all(more // ID_BASE == 3) and len(set(more)) == len(more)
    assert [p["examples"] for p in raised.progress()] == [6, 18 + len(more)]


@pytest.mark.once
def test_corpus_specs_read_epoch_caps():
    assert corpus_entries(["books:0.3:epochs=4", "web:epochs=2",
                           "s3://b/x=1", {"path": "t", "epochs": 3},
                           ["u", 2, 5], ["v", 1]]) == [
        ["books", 0.3, 4], ["web", 1.0, 2], ["s3://b/x=1", 1.0, None],
        ["t", 1.0, 3], ["u", 2.0, 5], ["v", 1.0, None]]


@pytest.mark.once
@pytest.mark.parametrize("spec, said", [
    ("web:0.7:epochs=0", "must be a whole number >= 1"),
    ("web:0.7:epochs=-1", "must be a whole number >= 1"),
    ("web:0.7:epochs=2.5", "must be a whole number >= 1"),
    ("web:0.7:epochs=", "must be a whole number >= 1"),
    ("web:0.7:epochs=four", "must be a whole number >= 1"),
    ({"path": "web", "epochs": 2.0}, "must be a whole number >= 1"),
    ("web:0.7:epoch=4", "unknown option epoch="),
])
def test_a_bad_epoch_cap_is_refused_in_one_line_naming_the_corpus(spec,
                                                                  said):
    with pytest.raises(PretrainingError) as error:
        corpus_entries(["books:0.3", spec], "arguments")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("Corpus web (arguments): ")
    assert said in message


@pytest.mark.once
def test_a_cap_on_a_single_corpus_is_refused():
    with pytest.raises(PretrainingError, match="Corpus books .* an epoch "
                       "cap applies to a corpus of a mixture"):
        corpus_entries(["books:epochs=4"])


@pytest.fixture
def capped_run(tmp_path):
    """The 125-word BERT preset, two corpora of two documents, and the
    `kzoo pretrain` command of a mixture of them (tiny_mlm, batch 2,
    checkpoints every 2 steps) given each corpus' epoch cap."""
    pretraining_testing.register_tiny_mlm()
    preset = pretraining_testing.make_preset(tmp_path / "preset")
    a, b = [str(pretraining_testing.make_corpus(tmp_path / name, preset,
                                                documents=count, seed=seed))
            for name, count, seed in (("a", 2, 1), ("b", 2, 2))]

    def command(epochs, max_steps):
        config = tmp_path / f"run_{epochs}.toml"
        config.write_text(f'corpus = [{{path = "{a}", epochs = {epochs}}}, '
                          f'"{b}:1:epochs={epochs}"]\n')
        return ["pretrain", str(preset), str(tmp_path / "out"), "--config",
                str(config), "--objective", "tiny_mlm", "--from-scratch",
                "--batch-size", "2", "--sequence-length", "32",
                "--checkpoint-every", "2", "--learning-rate", "1e-3",
                "--warmup-steps", "1", "--quiet", "--max-steps",
                str(max_steps)]

    return tmp_path / "out", (a, b), command


def _stops_at_step_4(output, corpora, capsys):
    a, b = corpora
    err = capsys.readouterr().err.strip()
    assert "\n" not in err
    assert err.startswith("kzoo pretrain: error: Every corpus of the "
                          f"mixture has reached its epoch cap ({a}: 4 "
                          f"examples in 1 epoch; {b}: 4 examples in 1 "
                          "epoch): they fill 4 batches")
    saved = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert saved == ["step-000000002", "step-000000004"]


def test_a_run_whose_caps_run_out_stops_at_its_checkpoint(capped_run,
                                                          capsys):
    """Two corpora of two documents capped at one epoch fill 4 batches of
    2 (tiny_mlm's rows take sentences until 5 ids), so an 8-step run
    stops in one line at step 4 with its checkpoints kept; the same
    command with --max-steps 4 finishes it from the checkpoint of step
    4."""
    output, (a, b), command = capped_run
    assert kzoo_main(command(epochs=1, max_steps=8)) == 1
    _stops_at_step_4(output, (a, b), capsys)
    assert kzoo_main(command(epochs=1, max_steps=4)) == 0
    out = capsys.readouterr().out
    assert "resumed from step 4" in out
    assert f"{a} (weight 0.5, at most 1 epoch): 4 examples, epoch 1" in out
    assert (output / "preset" / "config.json").exists()


@pytest.mark.once
def test_a_raised_cap_resumes_the_run_that_ran_out(capped_run, capsys):
    """The caps are not part of the run's identity: the run that ran out
    at step 4 goes on to step 8 with the caps raised to two epochs, the
    corpora in their second."""
    output, (a, b), command = capped_run
    assert kzoo_main(command(epochs=1, max_steps=8)) == 1
    _stops_at_step_4(output, (a, b), capsys)
    assert kzoo_main(command(epochs=2, max_steps=8)) == 0
    out = capsys.readouterr().out
    assert "pretrained 8 steps, resumed from step 4" in out
    assert f"{a} (weight 0.5, at most 2 epochs): 8 examples, epoch 2" in out
