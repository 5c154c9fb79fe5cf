"""`kzoo pretrain` resumes exactly: on the suite's current backend (each
backend's pass runs it), a `kzoo pretrain` process killed with SIGKILL
after a checkpoint and the same command run again train what the
uninterrupted run trains (per-step losses and final weights equal,
<= 1e-6); once, the same with gradient accumulation (its step count and
learning rate schedule over optimizer steps), and a mixed_bfloat16 run
restores its variables with their dtypes. The real "mlm" objective on a corpus that
`kzoo.corpus.prepare_corpus` made from a few paragraphs.

A full disk or a kill while a checkpoint is written
(`test_run_inputs.py`), bad inputs, evaluation and the config file are
backend-independent and run once."""

import json
import signal
import time
from pathlib import Path

import keras
import numpy as np
import pytest

import pretraining_testing
import warm_python
from kzoo.cli import main as kzoo_main
from kzoo.pretraining import checkpoints
from kzoo.pretraining.run import Run, pretrain

STEPS = 6
OPTIONS = dict(objective="mlm", from_scratch=True, max_steps=STEPS,
               batch_size=4, sequence_length=32, checkpoint_every=2,
               learning_rate=1e-3, warmup_steps=2, seed=5, verbose=0)
FLAGS = ["--objective", "mlm", "--from-scratch", "--max-steps", str(STEPS),
         "--batch-size", "4", "--sequence-length", "32",
         "--checkpoint-every", "2", "--learning-rate", "1e-3",
         "--warmup-steps", "2", "--seed", "5", "--quiet"]
SCRIPT = Path(pretraining_testing.__file__)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("pretraining")
    preset = pretraining_testing.make_mlm_preset(root / "preset")
    corpus = pretraining_testing.prepare_text_corpus(root / "corpus", preset)
    return root, str(preset), str(corpus)


@pytest.fixture(scope="module")
def uninterrupted(tiny):
    root, preset, corpus = tiny
    summary = pretrain(preset, corpus, root / "whole", **OPTIONS)
    assert summary["steps_this_run"] == STEPS
    return root / "whole"


def records(output):
    lines = (Path(output) / "metrics.jsonl").read_text().splitlines()
    return [json.loads(line) for line in lines]


def losses(output):
    return {r["step"]: r["loss"] for r in records(output) if "loss" in r}


def final_weights(output, steps=STEPS):
    step, folder = checkpoints.list_checkpoints(output)[-1]
    assert step == steps
    with np.load(folder / "variables.npz") as data:
        return [data[key] for key in sorted(data)]


def assert_same_run(output, reference, steps=STEPS):
    got, want = losses(output), losses(reference)
    assert sorted(got) == list(range(1, steps + 1)) == sorted(want)
    loss_diff = max(abs(got[s] - want[s]) for s in want)
    weights = final_weights(output, steps)
    reference_weights = final_weights(reference, steps)
    assert len(weights) == len(reference_weights)
    weight_diff = max(float(np.max(np.abs(
        a.astype(np.float64) - b.astype(np.float64)))) if a.size else 0.0
        for a, b in zip(weights, reference_weights))
    print(f"{keras.backend.backend()}: max |loss diff| {loss_diff:.3g}, "
          f"max |weight diff| {weight_diff:.3g}")
    assert loss_diff <= 1e-6 and weight_diff <= 1e-6


def test_kill_9_then_the_same_command_resumes_exactly(tiny, uninterrupted):
    root, preset, corpus = tiny
    output = root / "killed"
    arguments = ["pretrain", preset, corpus, str(output), *FLAGS]
    # The process stops still once checkpoint 2 is written (see
    # pretraining_testing), so that the kill lands between two
    # checkpoints however busy the machine is; a kill while a checkpoint
    # is written is test_run_inputs.py's.
    env = warm_python.environment(
        path=[SCRIPT.parent], KZOO_TEST_PAUSE_AFTER_CHECKPOINT="2",
        OMP_NUM_THREADS="1")
    process = warm_python.start([SCRIPT, *arguments], env,
                                merge_stderr=True)
    first = output / checkpoints.CHECKPOINTS / "step-000000002"
    # The loop ends as soon as the checkpoint is there; the deadline is
    # for a machine under load (the TensorFlow pass missed 300 s at load
    # ~10, with no checkpoint yet).
    deadline = time.time() + 900
    while not first.exists() and process.poll() is None and \
            time.time() < deadline:
        time.sleep(0.05)
    process.kill()
    out = process.communicate()[0]
    assert process.returncode == -signal.SIGKILL, out
    assert [s for s, _ in checkpoints.list_checkpoints(output)] == [2], out
    # The same command again (in this process: a second interpreter
    # start-up would double the test's time; the checkpoint holds every
    # state a fresh process lacks).
    assert kzoo_main(arguments) == 0
    assert_same_run(output, uninterrupted)
    assert (output / "preset" / "config.json").is_file()


class Killed(BaseException):
    """Stands for a kill right after a checkpoint: nothing cleaned up."""


def kill_after_checkpoint(monkeypatch, step):
    write = checkpoints.write_checkpoint

    def write_then_die(output, at, arrays, state):
        final = write(output, at, arrays, state)
        if at == step:
            raise Killed()
        return final

    monkeypatch.setattr(checkpoints, "write_checkpoint", write_then_die)


# Accumulation and mixed precision are Keras' own on every backend, and
# what a checkpoint saves of them is variables like any other: once (the
# torch pass, where kzoo's fused AdamW update has its own path).
@pytest.mark.once
def test_gradient_accumulation_steps_schedule_and_exact_resume(
        tiny, monkeypatch):
    root, preset, corpus = tiny
    options = dict(OPTIONS, max_steps=4, batch_size=2,
                   gradient_accumulation_steps=2)
    whole = root / "accumulated"
    summary = pretrain(preset, corpus, whole, **options)
    assert summary["steps_this_run"] == 4
    steps = [r for r in records(whole) if "loss" in r]
    assert [r["step"] for r in steps] == [1, 2, 3, 4]
    # Warmup over optimizer steps (not batches): 0, peak/2, then linear
    # decay to 0 at step 4.
    np.testing.assert_allclose([r["learning_rate"] for r in steps],
                               [0.0, 5e-4, 1e-3, 5e-4], atol=1e-12)
    state = checkpoints.read_state(checkpoints.list_checkpoints(whole)[-1][1])
    # Keras counts batches; 2 per optimizer step.
    iterations = state["variables"].index(next(
        p for p in state["variables"] if p.endswith("iteration")
        or p.endswith("iterations")))
    with np.load(checkpoints.list_checkpoints(whole)[-1][1]
                 / "variables.npz") as data:
        assert int(data[f"v{iterations:05d}"]) == 8

    output = root / "accumulated_killed"
    kill_after_checkpoint(monkeypatch, 2)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **options)
    monkeypatch.undo()
    assert pretrain(preset, corpus, output, **options)["resumed_from"] == 2
    assert_same_run(output, whole, steps=4)


@pytest.mark.once
def test_mixed_bfloat16_runs_and_restores_its_variables(tiny, monkeypatch):
    root, preset, corpus = tiny
    options = dict(OPTIONS, max_steps=2, checkpoint_every=1, warmup_steps=1,
                   dtype="mixed_bfloat16")
    output = root / "bf16"
    kill_after_checkpoint(monkeypatch, 1)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **options)
    monkeypatch.undo()
    restore = Run._restore
    restored = {}

    def spy(self, folder):
        state = restore(self, folder)
        restored["dtypes"] = [keras.backend.standardize_dtype(v.dtype)
                              for v in self.variables]
        restored["state"] = state["dtypes"]
        restored["policy"] = self.task.backbone.dtype_policy.name
        return state

    monkeypatch.setattr(Run, "_restore", spy)
    summary = pretrain(preset, corpus, output, **options)
    assert summary["resumed_from"] == 1 and summary["steps_this_run"] == 1
    assert np.isfinite(summary["loss"])
    assert restored["policy"] == "mixed_bfloat16"
    # Mixed precision keeps float32 variables (computing in bfloat16);
    # each comes back with the dtype it was saved with.
    assert restored["dtypes"] == restored["state"]
    assert "float32" in restored["dtypes"]
    config = json.loads((output / "preset" / "config.json").read_text())
    assert "mixed_bfloat16" in json.dumps(config)


# --- safe resumes (issue 47 item 6) ------------------------------------

def copy_run(source, target):
    import shutil
    shutil.copytree(source, target)
    return target


def text_inputs(root):
    return sorted((root / "corpus_text").glob("*.txt"))


@pytest.mark.once
def test_a_changed_corpus_is_refused_naming_what_changed(tiny, uninterrupted):
    from kzoo.corpus import prepare_corpus
    from kzoo.pretraining.config import PretrainingError
    root, preset, corpus = tiny
    output = copy_run(uninterrupted, root / "on_changed_corpus")
    extra = root / "extra_text" / "persuasion_more.txt"
    extra.parent.mkdir(exist_ok=True)
    extra.write_text("Another chapter of text that was not there.\n\n"
                     "It holds two paragraphs of words.\n", encoding="utf-8")
    prepare = dict(tokenizer=preset, processes=1, progress=False)
    changed = {
        "files added: " + str(extra): prepare_corpus(
            [*text_inputs(root), extra], root / "corpus_more", **prepare),
        "shard_tokens": prepare_corpus(
            text_inputs(root), root / "corpus_shards", shard_tokens=2000,
            **prepare),
        "validation documents 0 there, 2 now": prepare_corpus(
            text_inputs(root), root / "corpus_held_out",
            validation_documents=2, **prepare),
    }
    for said, summary in changed.items():
        assert summary["documents"]
    for said, folder in zip(changed, ("corpus_more", "corpus_shards",
                                      "corpus_held_out")):
        with pytest.raises(PretrainingError) as error:
            pretrain(preset, root / folder, output, **OPTIONS)
        message = str(error.value)
        assert said in message and "--overwrite" in message and \
            "another OUTPUT" in message and "\n" not in message, message
    # The same text prepared again elsewhere is the same corpus: the
    # finished run is resumed (nothing left to train), not refused.
    same = prepare_corpus(text_inputs(root), root / "corpus_again", **prepare)
    assert same["documents"]
    summary = pretrain(preset, root / "corpus_again", output, **OPTIONS)
    assert summary["resumed_from"] == STEPS and \
        summary["steps_this_run"] == 0


@pytest.mark.once
def test_raising_max_steps_extends_the_run_with_its_schedule(
        tiny, uninterrupted, monkeypatch):
    from kzoo.pretraining.config import PretrainingError
    from kzoo.pretraining.schedule import PretrainingSchedule
    root, preset, corpus = tiny
    # A run planned for 4 steps, killed after step 2, goes on to 6 with
    # its linear decay stretched there: its warmup (2 steps, explicit)
    # is over at the kill, so it trains exactly what the 6-step run does.
    output = root / "extended"
    kill_after_checkpoint(monkeypatch, 2)
    with pytest.raises(Killed):
        pretrain(preset, corpus, output, **dict(OPTIONS, max_steps=4))
    monkeypatch.undo()
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **OPTIONS)  # max_steps 6
    message = str(error.value)
    assert "planned for 4 steps" in message and "--extend-schedule" in \
        message and "\n" not in message, message
    summary = pretrain(preset, corpus, output, extend_schedule=True,
                       **OPTIONS)
    assert summary["resumed_from"] == 2
    assert_same_run(output, uninterrupted)
    # A finished run (6 steps) extended to 8: the first 6 steps stay as
    # trained, the last two at the 8-step schedule's rates.
    finished = copy_run(uninterrupted, root / "finished_extended")
    with pytest.raises(PretrainingError, match="at step 6, past it"):
        pretrain(preset, corpus, finished, **dict(OPTIONS, max_steps=4))
    pretrain(preset, corpus, finished, extend_schedule=True,
             **dict(OPTIONS, max_steps=8))
    steps = [r for r in records(finished) if "loss" in r]
    assert [r["step"] for r in steps] == list(range(1, 9))
    assert [r["loss"] for r in steps[:STEPS]] == \
        [losses(uninterrupted)[s] for s in range(1, STEPS + 1)]
    schedule = PretrainingSchedule(1e-3, 2, 8)
    np.testing.assert_allclose([r["learning_rate"] for r in steps[STEPS:]],
                               [schedule.rate_at(6), schedule.rate_at(7)],
                               rtol=1e-12)
    state = checkpoints.read_state(
        checkpoints.list_checkpoints(finished)[-1][1])
    assert state["step"] == 8 and state["schedule_steps"] == 8


def random_id_corpus(folder, documents=30, seed=0):
    """A corpus of random ids in pretraining_testing's 125-word
    vocabulary (documents of 1-4 sentences of 3-11 ids)."""
    from kzoo.corpus import Corpus
    from kzoo.corpus.shards import SHARDS_FOLDER, write_manifest, \
        write_shard
    rng = np.random.default_rng(seed)
    low = len(pretraining_testing.SPECIALS)
    shards = []
    for name in ("a", "b"):
        docs = [[rng.integers(low, low + len(pretraining_testing.WORDS),
                              rng.integers(3, 12))
                 for _ in range(rng.integers(1, 5))]
                for _ in range(documents // 2)]
        shards.append(write_shard(folder / SHARDS_FOLDER, name, docs,
                                  np.uint16))
    write_manifest(folder, {"shards": shards, "tokenizer": {"sha256": "x"}})
    return Corpus(folder)


def global_batches(corpus, processes, draw_groups, steps, resume_at=None,
                   batch_size=12, seed=3):
    """Batches `resume_at ... steps - 1` as `processes` processes make
    them (their rows joined), each process' stream restored to the state
    a 1-process run checkpointed before batch `resume_at`."""
    streams = [pretraining_testing.TinyMaskStream(
        corpus, batch_size, seed, rank, processes, draw_groups)
        for rank in range(processes)]
    start = 0
    if resume_at is not None:
        single = pretraining_testing.TinyMaskStream(
            corpus, batch_size, seed, 0, 1, draw_groups)
        for step in range(resume_at):
            single.batch(step)
        state = single.state_before(resume_at)
        for stream in streams:
            stream.restore(state)
        start = resume_at
    joined = []
    for step in range(start, steps):
        parts = [stream.batch(step) for stream in streams]
        joined.append(tuple(
            {key: np.concatenate([p[0][key] for p in parts])
             for key in parts[0][0]} if i == 0 else
            np.concatenate([p[i] for p in parts]) for i in range(3)))
    return joined


# (processes, draw groups): a 1-process run resumed on 2 (each process
# inside one group), the 4 processes over 2 groups, and 2
# processes whose rows straddle groups of 4 rows (12 = 3 groups).
@pytest.mark.once
@pytest.mark.parametrize("processes,draw_groups", [(2, 1), (4, 2), (2, 3)])
def test_a_run_goes_on_on_another_process_count_with_the_same_batches(
        tmp_path, processes, draw_groups):
    corpus = random_id_corpus(tmp_path / "corpus")
    want = global_batches(corpus, 1, draw_groups, 8)
    got = global_batches(corpus, processes, draw_groups, 8, resume_at=3)
    assert len(got) == 5
    for mine, single in zip(got, want[3:]):
        for key in single[0]:
            np.testing.assert_array_equal(mine[0][key], single[0][key])
        np.testing.assert_array_equal(mine[1], single[1])
        np.testing.assert_array_equal(mine[2], single[2])


def rewrite_checkpoint(folder, order, shapes=None):
    """Checkpoint `folder` rewritten with its variables in `order`
    (indices; those left out are dropped), array `i` reshaped to
    `shapes[i]` where given."""
    state = json.loads((folder / "state.json").read_text())
    with np.load(folder / "variables.npz") as data:
        arrays = [data[f"v{i:05d}"] for i in range(len(state["shapes"]))]
    for index, shape in (shapes or {}).items():
        arrays[index] = np.zeros(shape, arrays[index].dtype)
        state["shapes"][index] = list(shape)
    for name in ("variables", "keys", "shapes", "dtypes"):
        if name in state:
            state[name] = [state[name][i] for i in order]
    checkpoints.write_arrays(folder / "variables.npz",
                             [arrays[i] for i in order])
    (folder / "state.json").write_text(json.dumps(state))
    return state


@pytest.mark.once
def test_checkpoint_variables_are_restored_by_path(
        tiny, uninterrupted, monkeypatch):
    from kzoo.pretraining.config import PretrainingError
    root, preset, corpus = tiny
    output = copy_run(uninterrupted, root / "reordered")
    folder = checkpoints.list_checkpoints(output)[-1][1]
    paths = checkpoints.read_state(folder)["variables"]
    query, key = (paths.index(f"transformer_layer_0/attention/{name}/kernel")
                  for name in ("query", "key"))
    with np.load(folder / "variables.npz") as data:
        want = {name: data[f"v{index:05d}"] for name, index in
                (("query", query), ("key", key))}
    assert not np.array_equal(want["query"], want["key"])
    # The two same-shape kernels stored in each other's places.
    order = list(range(len(paths)))
    order[query], order[key] = key, query
    rewrite_checkpoint(folder, order)
    restore, restored = Run._restore, {}

    def spy(self, at):
        state = restore(self, at)
        restored.update({v.path: keras.ops.convert_to_numpy(v.value)
                         for v in self.variables})
        return state

    monkeypatch.setattr(Run, "_restore", spy)
    summary = pretrain(preset, corpus, output, **OPTIONS)
    assert summary["resumed_from"] == STEPS
    for name in ("query", "key"):
        np.testing.assert_array_equal(
            restored[f"transformer_layer_0/attention/{name}/kernel"],
            want[name])
    # A variable missing, one the model lacks, one of another shape: one
    # line naming each.
    monkeypatch.undo()
    folder = checkpoints.list_checkpoints(output)[-1][1]
    paths = checkpoints.read_state(folder)["variables"]
    bias = paths.index("mlm_head/bias")
    gamma = paths.index("mlm_head/layer_norm/gamma")
    rewrite_checkpoint(folder, [i for i in range(len(paths)) if i != bias],
                       shapes={gamma: (7,)})
    with pytest.raises(PretrainingError) as error:
        pretrain(preset, corpus, output, **OPTIONS)
    message = str(error.value)
    assert "not in the checkpoint: mlm_head/bias" in message and \
        "mlm_head/layer_norm/gamma (7,) there" in message and \
        "--overwrite" in message and "\n" not in message, message


@pytest.mark.once
def test_a_run_resumed_on_two_processes_keeps_its_draw_groups(
        tiny, uninterrupted):
    """The run-level half of the test above: a checkpoint made on 1
    process (draw groups 1), resumed by process 0 of 2, resumes with the
    run's draw groups (not the process count's); asking for others is
    refused naming them."""
    from kzoo.pretraining.config import PretrainingError, resolve_options
    from kzoo.pretraining.corpus_identity import corpus_record
    from kzoo.pretraining.engines import Engine
    root, preset, corpus = tiny
    output = copy_run(uninterrupted, root / "on_two_processes")
    last = checkpoints.list_checkpoints(output)[-1][1]
    assert checkpoints.read_state(last)["identity"]["draw_groups"] == 1

    def resume(**options):
        run = Run(preset, corpus, output, resolve_options(
            dict(OPTIONS, **options)), engine=Engine(index=0, count=2))
        run.objective, opened = run._objective_and_corpus()
        run.corpus_record = corpus_record(opened)
        return run, run._plan_and_check(run.options, opened)[0]

    run, resume_from = resume()
    assert resume_from == last and run.options["draw_groups"] == 1
    with pytest.raises(PretrainingError, match="draw_groups: 1 there, 2 now"):
        resume(draw_groups=2)
