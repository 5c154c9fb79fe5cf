"""`kzoo pretrain`'s bad inputs, crashes while a checkpoint is written,
`--eval-every` and the config file, in this process. Each bad input is a
one-line error naming the file and what to do, and leaves nothing
half-written. None of it depends on the backend (the per-backend resume
checks are test_resume.py's), so it runs once."""

import json
import math
import os

import numpy as np
import pytest

import pretraining_testing
from kzoo.cli import main as kzoo_main
from kzoo.corpus import CorpusError
from kzoo.pretraining import checkpoints
from kzoo.pretraining.config import PretrainingError
from kzoo.pretraining.run import Run, pretrain
from test_resume import OPTIONS, assert_same_run, records

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny preset, its corpus (2 documents held out), and a corpus of
    the same text from another tokenizer (a 125-word one)."""
    root = tmp_path_factory.mktemp("run_inputs")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(
        root / "corpus", preset, validation_documents=2)
    other = pretraining_testing.make_preset(root / "other_preset")
    foreign = pretraining_testing.prepare_text_corpus(
        root / "other_corpus", preset, paragraphs=4, tokenizer=str(other))
    return root, str(preset), str(corpus), str(foreign)


@pytest.fixture(scope="module")
def whole(tiny):
    root, preset, corpus, _ = tiny
    pretrain(preset, corpus, root / "whole", **OPTIONS)
    return root / "whole"


def one_line(error):
    message = str(error.value)
    assert "\n" not in message, message
    return message


def test_a_corpus_from_another_tokenizer_is_refused(tiny):
    root, preset, _, foreign = tiny
    output = root / "foreign_out"
    with pytest.raises(CorpusError) as error:
        pretrain(preset, foreign, output, **OPTIONS)
    message = one_line(error)
    assert foreign in message and "another tokenizer" in message
    assert "Prepare the corpus again" in message
    assert not output.exists()  # nothing left behind


def test_a_corpus_smaller_than_one_batch_is_refused(tiny):
    root, preset, corpus, _ = tiny
    output = root / "small_out"
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **dict(OPTIONS, batch_size=5000))
    message = one_line(error)
    assert corpus in message and "smaller than one batch" in message
    assert "--batch-size" in message
    assert not output.exists()


def test_a_file_or_a_folder_of_other_files_is_refused_as_output(tiny):
    root, preset, corpus, _ = tiny
    file = root / "a_file"
    file.write_text("mine")
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, file, **OPTIONS)
    assert str(file) in one_line(error) and "give a folder" in str(
        error.value)
    assert file.read_text() == "mine"
    folder = root / "papers"
    folder.mkdir()
    (folder / "thesis.tex").write_text("mine")
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, folder, **OPTIONS)
    message = one_line(error)
    assert str(folder) in message and "thesis.tex" in message
    assert "empty or new folder" in message
    assert sorted(p.name for p in folder.iterdir()) == ["thesis.tex"]


def test_a_second_run_on_a_locked_output_names_the_first(tiny):
    root, preset, corpus, _ = tiny
    output = root / "locked"
    with checkpoints.RunLock(output):
        with pytest.raises(PretrainingError) as error:
            pretrain(preset, corpus, output, **OPTIONS)
    message = one_line(error)
    assert f"pid {os.getpid()}" in message and str(output) in message
    assert "another OUTPUT" in message
    assert sorted(p.name for p in output.iterdir()) == [checkpoints.LOCK]


def test_a_checkpoint_from_other_options_needs_overwrite(tiny):
    root, preset, corpus, _ = tiny
    output = root / "other_options"
    options = dict(OPTIONS, max_steps=2, warmup_steps=1)
    pretrain(preset, corpus, output, **options)
    before = records(output)
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **dict(options, seed=6))
    message = one_line(error)
    assert "step-000000002" in message and "seed: 5 there, 6 now" in message
    assert "--overwrite" in message
    assert records(output) == before  # untouched
    summary = pretrain(preset, corpus, output, overwrite=True,
                       **dict(options, seed=6))
    assert summary["resumed_from"] is None
    assert summary["steps_this_run"] == 2
    (step, folder), = checkpoints.list_checkpoints(output)
    assert checkpoints.read_state(folder)["identity"]["seed"] == 6
    assert [r["step"] for r in records(output)] == [1, 2]
    assert records(output) != before


class Killed(BaseException):
    """What a SIGKILL during the write would leave: nothing cleaned up."""


def test_full_disk_and_a_kill_while_writing_leave_the_last_checkpoint(
        tiny, whole, monkeypatch):
    root, preset, corpus, _ = tiny
    output = root / "crashes"
    write_arrays = checkpoints.write_arrays

    def full_disk(path, arrays):
        if ".step-000000004" in str(path):
            with open(path, "wb") as f:
                f.write(b"half")
            raise OSError(28, "No space left on device")
        write_arrays(path, arrays)

    monkeypatch.setattr(checkpoints, "write_arrays", full_disk)
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **OPTIONS)
    message = one_line(error)
    assert "disk is full" in message and "step-000000004" in message
    assert "Free space" in message
    names = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert names == ["step-000000002"]  # no half-written folder left

    def killed(path, arrays):
        if ".step-000000004" in str(path):
            with open(path, "wb") as f:
                f.write(b"half")
            # A killed process cleans nothing up.
            monkeypatch.setattr(checkpoints.shutil, "rmtree",
                                lambda *a, **k: None)
            raise Killed()
        write_arrays(path, arrays)

    monkeypatch.setattr(checkpoints, "write_arrays", killed)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **OPTIONS)
    monkeypatch.undo()
    names = sorted(p.name for p in (output / "checkpoints").iterdir())
    assert names[0].startswith(".step-000000004.partial")
    assert [s for s, _ in checkpoints.list_checkpoints(output)] == [2]
    summary = pretrain(preset, corpus, output, **OPTIONS)
    assert summary["resumed_from"] == 2
    assert not [p for p in (output / "checkpoints").iterdir()
                if p.name.startswith(".")]
    assert_same_run(output, whole)


def test_eval_every_scores_the_validation_split_at_its_steps(tiny):
    root, preset, corpus, _ = tiny
    output = root / "evaluated"
    # Steps 2 and 4 are scored by fit, step 5 (the end) after it.
    summary = pretrain(preset, corpus, output, eval_every=2, eval_batches=2,
                       **dict(OPTIONS, max_steps=5, checkpoint_every=5))
    evaluations = [r for r in records(output) if "eval_loss" in r]
    assert [r["step"] for r in evaluations] == [2, 4, 5]
    for record in evaluations:
        assert np.isfinite(record["eval_loss"])
        assert math.isclose(record["eval_perplexity"],
                            math.exp(record["eval_loss"]), rel_tol=1e-9)
        # BertMaskedLM compiles sparse categorical accuracy.
        assert 0.0 <= record["eval_sparse_categorical_accuracy"] <= 1.0
    assert summary["evaluation"] == evaluations[-1]
    assert [r["step"] for r in records(output) if "loss" in r] == \
        [1, 2, 3, 4, 5]
    # The same command on the finished run trains nothing and reports the
    # run's last evaluation (it used to report None).
    again = pretrain(preset, corpus, output, eval_every=2, eval_batches=2,
                     **dict(OPTIONS, max_steps=5, checkpoint_every=5))
    assert again["steps_this_run"] == 0
    assert again["evaluation"] == evaluations[-1]
    # ... and keeps it in metrics.jsonl: the end's evaluation comes after
    # the last checkpoint, whose recorded size used to cut it off.
    assert [r for r in records(output) if "eval_loss" in r] == evaluations


@pytest.mark.parametrize("kind", ["toml", "json"])
def test_a_config_file_holds_the_options_and_flags_win(
        tiny, tmp_path, monkeypatch, kind, capsys):
    _, preset, corpus, _ = tiny
    if kind == "toml":
        text = ('max-steps = 3\nbatch_size = 8\nlearning_rate = 2e-4\n'
                'seed = 9\n[objective_options]\nmasking = "whole_word"\n')
    else:
        text = json.dumps({"max-steps": 3, "batch_size": 8,
                           "learning_rate": 2e-4, "seed": 9,
                           "objective_options": {"masking": "whole_word"}})
    config = tmp_path / f"run.{kind}"
    config.write_text(text)
    seen = {}

    def train(self):
        seen.update(self.options)
        return {"steps": self.options["max_steps"], "resumed_from": None,
                "loss": None, "tokens_per_second": None, "preset": "p"}

    monkeypatch.setattr(Run, "train", train)
    code = kzoo_main(["pretrain", preset, corpus, str(tmp_path / "out"),
                      "--config", str(config), "--max-steps", "7",
                      "--seed", "1", "--quiet"])
    assert code == 0
    assert seen["max_steps"] == 7 and seen["seed"] == 1  # the flags win
    assert seen["batch_size"] == 8 and seen["learning_rate"] == 2e-4
    assert seen["objective_options"] == {"masking": "whole_word"}
    # Left to the family's recipe, which the run resolves (test_recipes.py).
    assert seen["warmup_steps"] is None
    # An unknown key: one line naming the file.
    config.write_text(text.replace("seed", "sead"))
    capsys.readouterr()
    code = kzoo_main(["pretrain", preset, corpus, str(tmp_path / "out"),
                      "--config", str(config), "--max-steps", "7"])
    err = capsys.readouterr().err
    assert code != 0 and str(config) in err and "sead" in err


def test_perplexity_comes_from_the_token_prediction_loss_only():
    """MLM + NSP's total loss mixes two objectives: the perplexity is the
    masked-LM head's; a single-loss task's is its loss'; none otherwise."""
    from kzoo.pretraining.callbacks import language_model_loss_of
    assert language_model_loss_of(
        {"loss": 3.0, "mlm_loss": 2.5, "nsp_loss": 0.5}) == 2.5
    assert language_model_loss_of({"loss": 4.0, "accuracy": 0.1}) == 4.0
    assert language_model_loss_of(
        {"loss": 9.0, "discriminator_loss": 0.2}) is None
