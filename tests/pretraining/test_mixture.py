"""Corpora mixed with weights (kzoo/pretraining/streams/mixture.py): each
corpus' share held to within one example at every prefix, each corpus
its own epochs, the same batches after a restore from a checkpoint's
(JSON) state and when split over processes, and the bad inputs (a weight
<= 0, a corpus from another tokenizer) refused in one line naming the
corpus. The stream checks do not depend on the backend (once); a
`kzoo pretrain --corpus a:0.25 --corpus b:0.75` run killed after a
checkpoint and resumed trains what the uninterrupted run trains (once
too: what the mixture adds to a checkpoint is the stream's JSON state,
and tests/pretraining/test_resume.py's kill -9 test holds each
backend's own resume of the weights and optimizer exact; on TensorFlow
this test's three runs took ~200 s of a pass)."""

import json
import types

import numpy as np
import pytest

import pretraining_testing
from kzoo.cli import main as kzoo_main
from kzoo.corpus import CorpusError
from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, write_shard
from kzoo.pretraining.config import PretrainingError, corpus_entries
from kzoo.pretraining.run import pretrain
from kzoo.pretraining.streams.mixture import (CorpusMixture, make_stream,
                                              open_corpus)
from test_resume import (Killed, assert_same_run, kill_after_checkpoint,
                         losses)
from test_stream_base import SentenceStream

# Ids of corpus k's sentences are k * ID_BASE + (a running number).
ID_BASE = 10_000


def _write_corpus(folder, corpus_index, documents, tokenizer="x"):
    first = corpus_index * ID_BASE
    docs = []
    for document in range(documents):
        # Document d of a corpus holds 1 + d % 3 one-id sentences.
        docs.append([[first + s] for s in range(1 + document % 3)])
        first += 100
    shard = write_shard(folder / SHARDS_FOLDER, "s", docs, np.uint32)
    write_manifest(folder, {"shards": [shard],
                            "tokenizer": {"sha256": tokenizer}})
    return str(folder)


@pytest.fixture(scope="module")
def folders(tmp_path_factory):
    root = tmp_path_factory.mktemp("mixture")
    return {"small": _write_corpus(root / "small", 0, 3),
            "large": _write_corpus(root / "large", 1, 40),
            "foreign": _write_corpus(root / "foreign", 2, 5, tokenizer="y")}


SENTENCES = types.SimpleNamespace(
    name="sentences", make_stream=lambda task, corpus, batch_size, seed,
    index, count, groups, length: SentenceStream(
        corpus, batch_size, seed=seed, process_index=index,
        process_count=count, draw_groups=groups))


def _stream(folders, weights, batch_size=4, seed=0, index=0, count=1,
            groups=None):
    mixture = CorpusMixture([(folders[name], weight)
                             for name, weight in weights])
    return make_stream(SENTENCES, None, mixture, batch_size, seed, index,
                       count, groups, 0)


def _first_ids(stream, steps, start=0):
    return [stream.batch(step)[0]["first"]
            for step in range(start, start + steps)]


@pytest.mark.once
def test_each_prefix_holds_each_corpus_share(folders):
    stream = _stream(folders, [("small", 0.25), ("large", 0.75)])
    ids = np.concatenate(_first_ids(stream, 30))
    from_small = np.cumsum(ids // ID_BASE == 0)
    examples = np.arange(1, ids.size + 1)
    assert np.max(np.abs(from_small - 0.25 * examples)) <= 1
    assert [p["examples"] for p in stream.progress()] == [30, 90]
    # Weights are shares: 1 and 3 mix as 0.25 and 0.75 do.
    same = _stream(folders, [("small", 1), ("large", 3)])
    np.testing.assert_array_equal(np.concatenate(_first_ids(same, 30)), ids)


@pytest.mark.once
def test_each_corpus_goes_through_its_own_epochs(folders):
    """The 3-document corpus (6 sentences) at half the examples goes round
    ten times while the 40-document one is in its first epoch; each of its
    epochs serves each of its sentences once, in a new order."""
    stream = _stream(folders, [("small", 0.5), ("large", 0.5)])
    ids = np.concatenate(_first_ids(stream, 30))
    small = ids[ids < ID_BASE]
    sentences = sorted({0, 100, 101, 200, 201, 202})
    epochs = small.reshape(-1, len(sentences))
    assert len(epochs) == 10
    for epoch in epochs:
        assert sorted(epoch) == sentences
    assert len({tuple(epoch) for epoch in epochs}) > 1
    large = ids[ids >= ID_BASE]
    assert len(set(large)) == len(large)  # no repeat: still epoch 1
    progress = {p["corpus"]: p for p in stream.progress()}
    assert progress[folders["small"]]["epoch"] == 9
    assert progress[folders["large"]]["epoch"] == 0


@pytest.mark.once
def test_a_restored_json_state_makes_the_same_batches(folders):
    weights = [("small", 0.3), ("large", 0.7)]
    whole = _stream(folders, weights, seed=7)
    want = [whole.batch(step)[0] for step in range(14)]
    first = _stream(folders, weights, seed=7)
    _first_ids(first, 9)
    # A checkpoint holds the state as JSON.
    state = json.loads(json.dumps(first.state_before(6)))
    resumed = _stream(folders, weights, seed=7)
    resumed.restore(state)
    for step in range(6, 14):
        got = resumed.batch(step)[0]
        for key in want[step]:
            np.testing.assert_array_equal(got[key], want[step][key])
    other_seed = _stream(folders, weights, seed=8)
    assert not np.array_equal(np.concatenate(_first_ids(other_seed, 14)),
                              np.concatenate([b["first"] for b in want]))


@pytest.mark.once
def test_processes_split_the_mixtures_batches(folders):
    weights = [("small", 0.3), ("large", 0.7)]
    whole = _stream(folders, weights, seed=2, groups=2)
    single = [whole.batch(step)[0] for step in range(5)]
    parts = [_stream(folders, weights, seed=2, index=rank, count=2)
             for rank in range(2)]
    for step, want in enumerate(single):
        got = [part.batch(step)[0] for part in parts]
        for key in want:
            np.testing.assert_array_equal(
                np.concatenate([got[0][key], got[1][key]]), want[key])


@pytest.mark.once
@pytest.mark.parametrize("weight", ["0", "-0.5", "nan"])
def test_a_weight_not_above_zero_is_refused_naming_the_corpus(weight):
    with pytest.raises(PretrainingError) as error:
        corpus_entries(["books:0.3", f"web:{weight}"], "arguments")
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("Corpus web ") and "> 0" in message


@pytest.mark.once
def test_corpus_specs_read_paths_and_weights():
    assert corpus_entries(["books:0.3", "s3://bucket/web", "a:b",
                           {"path": "t", "weight": 2}, ["u", 1]]) == [
        ["books", 0.3, None], ["s3://bucket/web", 1.0, None],
        ["a:b", 1.0, None], ["t", 2.0, None], ["u", 1.0, None]]
    with pytest.raises(PretrainingError,
                       match="Corpus books .* is listed twice"):
        corpus_entries(["books:1", "books:2"])


@pytest.mark.once
def test_a_corpus_from_another_tokenizer_is_refused_naming_it(folders):
    with pytest.raises(CorpusError) as error:
        open_corpus([(folders["small"], 1), (folders["foreign"], 1)])
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith(f"Corpus {folders['foreign']} was prepared "
                              "with another tokenizer")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The 125-word BERT preset and two corpora of random ids in its
    vocabulary (tiny_mlm: a NumPy masked LM, pretraining_testing)."""
    pretraining_testing.register_tiny_mlm()
    root = tmp_path_factory.mktemp("mixture_run")
    preset = pretraining_testing.make_preset(root / "preset")
    corpora = [pretraining_testing.make_corpus(root / name, preset,
                                               documents=count, seed=seed)
               for name, count, seed in (("a", 12, 1), ("b", 40, 2))]
    return root, str(preset), [str(c) for c in corpora]


MIXTURE_OPTIONS = dict(objective="tiny_mlm", from_scratch=True, max_steps=4,
                       batch_size=4, sequence_length=32, checkpoint_every=2,
                       learning_rate=1e-3, warmup_steps=1, seed=3, verbose=0)


@pytest.mark.once
def test_a_killed_mixture_run_resumes_exactly(tiny, monkeypatch, capsys):
    root, preset, (a, b) = tiny
    corpora = [f"{a}:0.25", f"{b}:0.75"]
    whole = root / "whole"
    summary = pretrain(preset, corpora, whole,
                       **MIXTURE_OPTIONS)
    assert [p["examples"] for p in summary["corpora"]] == [4, 12]
    output = root / "killed"
    kill_after_checkpoint(monkeypatch, 2)
    with pytest.raises(Killed):
        pretrain(preset, corpora, output, **MIXTURE_OPTIONS)
    monkeypatch.undo()
    assert sorted(losses(output)) == [1, 2]
    flags = [f"--{name.replace('_', '-')}={value}" for name, value in
             MIXTURE_OPTIONS.items() if name not in ("from_scratch",
                                                     "verbose")]
    # The same run again, its corpora in a config file.
    config = root / "mixture.toml"
    config.write_text(f"corpus = {json.dumps(corpora)}\n")
    command = ["pretrain", preset, str(output), "--config", str(config),
               "--from-scratch", "--quiet", *flags]
    assert kzoo_main(command) == 0
    assert f"{b} (weight 0.75): 12 examples" in capsys.readouterr().out
    assert_same_run(output, whole, steps=4)
    # Other weights (--corpus flags) are another run: refused, not resumed.
    command = ["pretrain", preset, str(output), "--corpus", f"{a}:0.5",
               "--corpus", f"{b}:0.5", "--from-scratch", *flags]
    assert kzoo_main(command) != 0
    err = capsys.readouterr().err
    assert "corpus_weights: [0.25, 0.75] there, [0.5, 0.5] now" in err
    # CORPUS and --corpus together: one line naming both.
    assert kzoo_main(["pretrain", preset, a, str(output), "--corpus",
                      f"{b}:1", *flags]) != 0
    assert f"Two corpora given: CORPUS {a} and --corpus" in \
        capsys.readouterr().err
