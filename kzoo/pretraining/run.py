"""Step-based pretraining runs that survive being killed at any moment.

`pretrain(preset, corpus, output, **options)` trains `max_steps` optimizer
steps of an objective (`kzoo.pretraining.objectives`) on a prepared corpus
(`kzoo.corpus`), checkpointing every `checkpoint_every` steps into
OUTPUT/checkpoints (`checkpoints.py`: atomic, the last K kept). Calling it
again with the same options after the process died (`kill -9` included)
resumes from the last complete checkpoint and trains exactly what the
uninterrupted run trains: the same batches in the same order with the
same masks (the stream's state, `BatchStream.state_before`), the same
dropout draws (every layer's `SeedGenerator` state is a variable), the
same optimizer state (its iteration count, moments and gradient
accumulators are variables), and the same learning rate (the schedule is
a function of the optimizer's iteration count alone).

Feeding Keras. `fit` runs the steps: a generator hands it
`stream.batch(i)` for consecutive batches from the resumed one; each
checkpoint interval is one Keras "epoch" (`steps_per_epoch` = interval x
gradient accumulation batches), so a resumed run is `fit(initial_epoch=
step // interval)` and the checkpoint is taken at the epoch's end. Keras
reads batches ahead of the step it trains (and on TensorFlow in another
thread), so the checkpoint saves `stream.state_before(next batch)`, not
the stream's current state; a lock keeps the two threads apart.

A "step" is one optimizer update: `gradient_accumulation_steps` batches
of `batch_size` examples (Keras' `gradient_accumulation_steps`).
"""

import contextlib
import copy
import json
import math
import os
import shutil
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from kzoo.pretraining import checkpoints, rng
from kzoo.utils import storage
from kzoo.utils.storage import is_url
from kzoo.pretraining.corpus_identity import corpus_record
from kzoo.pretraining.config import (
    PretrainingError, identity, read_config_file, resolve_options,
    run_corpus)

# The options a family's recipe fills in (`kzoo.pretraining.recipes`).
RECIPE_OPTIONS = ("optimizer", "learning_rate", "schedule", "warmup_steps",
                  "beta_1", "beta_2", "epsilon", "clip_norm",
                  "weight_decay")

# The schedules whose rate falls to its end at the run's planned steps:
# training past them needs the schedule stretched (--extend-schedule).
# Why a choice is asked for, not made: after a finished linear run the
# rate is 0, and any way on (stretching the decay, warming up again, a
# new constant tail) is another schedule; stretching is what a run
# planned for the new --max-steps from the start would do from here, so
# that is the one --extend-schedule picks, and it moves the rate at the
# resumed step (the message says by how much). constant and inverse_sqrt
# do not depend on the run's length: raising --max-steps just goes on.
DECAYING = ("linear", "cosine", "one_cycle")
# Identity entries older checkpoints lack: not compared when absent.
NEWER_IDENTITY = ("corpus", "mask_rate")

PRESET_FOLDER = "preset"
TENSORBOARD_FOLDER = "tensorboard"
# What a run writes in OUTPUT; anything else there is not ours.
OWN_NAMES = {checkpoints.LOCK, checkpoints.METRICS, checkpoints.CHECKPOINTS,
             PRESET_FOLDER, TENSORBOARD_FOLDER}


def pretrain(preset, corpus, output, config=None, **options):
    """Pretrain `preset` on the prepared corpus `corpus` into `output`.

    Args:
        preset: a preset name or folder whose family has a pretraining
            objective.
        corpus: a folder made by `kzoo.corpus.prepare_corpus` with the
            preset's tokenizer, or None when the `corpus` option (a
            mixture: `["books:0.3", "web:0.7"]`) names the corpora
            (`kzoo.pretraining.streams.mixture`).
        output: the run's folder (checkpoints, metrics.jsonl, tensorboard/,
            and at the end preset/). Running again with the same options
            resumes from its last checkpoint. A URL (`s3://`, `gs://`,
            `hf://`) keeps them there: checkpoints and the preset are
            committed with a marker, and a resume takes the newest
            committed checkpoint (`kzoo/pretraining/remote_output.py`).
        config: a JSON/TOML/YAML file of options; `options` win over it.
        **options: see `kzoo.pretraining.config.OPTIONS` (`max_steps` is
            required).

    Returns:
        A summary dict: steps, resumed_from, final loss, tokens/s, the
        last evaluation, the preset folder.

    Raises:
        PretrainingError (and `kzoo.corpus.CorpusError`, a ValueError too)
        naming the file and what to do.
    """
    given = read_config_file(config) if config else {}
    given.update({k: v for k, v in options.items() if v is not None})
    options = resolve_options(given, f"config file {config}" if config
                              else "arguments")
    corpus = run_corpus(corpus, options, f"config file {config}" if config
                        else "arguments")
    remote = None
    if is_url(output):
        from kzoo.pretraining.remote_output import RemoteOutput
        remote = RemoteOutput(output)
        output = remote.cache
    output = Path(output)
    if output.exists() and not output.is_dir():
        raise PretrainingError(f"OUTPUT {output} is a file; give a folder.")
    created = not output.exists()
    lock_existed = (output / checkpoints.LOCK).exists()
    output.mkdir(parents=True, exist_ok=True)
    # Many processes (engines.py): join the group first; process 0 holds
    # the lock and writes, the others read.
    from kzoo.pretraining.engines import Engine
    engine = Engine.start(options["model_parallel"])
    lock = checkpoints.RunLock(output) if engine.chief else \
        contextlib.nullcontext()
    with lock:
        try:
            # A URL's newest committed checkpoint, in a local folder.
            folder = output if remote is None else remote.pull(
                engine.index, engine.chief)
            return Run(preset, corpus, folder, options, engine,
                       source=f"config file {config}" if config
                       else "arguments", remote=remote).train()
        except BaseException:
            if engine.chief:
                _leave_no_trace(output, created, lock_existed)
            raise


def _leave_no_trace(output, created, lock_existed):
    """After a failed run: the lock file this run made goes (removed
    while still held), and OUTPUT too when this run made it and nothing
    else is in it (a run refused at set-up leaves nothing behind)."""
    try:
        if not lock_existed:
            (output / checkpoints.LOCK).unlink(missing_ok=True)
        if created and not any(output.iterdir()):
            output.rmdir()
    except OSError:
        pass



def _evaluation_at(line, step):
    """Whether a metrics.jsonl line (bytes) is a whole evaluation record
    of `step`."""
    try:
        record = json.loads(line)
    except ValueError:
        return False
    return isinstance(record, dict) and "eval_loss" in record and \
        record.get("step") == step

class Run:
    """One pretraining run (what `pretrain` builds and trains)."""

    def __init__(self, preset, corpus, output, options, engine=None,
                 source="arguments", remote=None):
        from kzoo.pretraining.engines import Engine
        self.engine = engine or Engine()
        # A URL OUTPUT (remote_output.py): `output` is its local folder.
        self.remote = remote
        self.preset = preset
        # [[path, weight, epoch cap], ...]: one corpus, or a mixture's.
        self.corpus_entries = run_corpus(corpus, {}, source)
        self.corpus_folder = " + ".join(entry[0] for entry in
                                       self.corpus_entries)
        self.output = output
        self.options = options
        self.source = source  # where the options came from, for errors
        self.accumulation = options["gradient_accumulation_steps"]
        self.metrics_path = output / checkpoints.METRICS
        self.tensorboard_dir = output / TENSORBOARD_FOLDER
        if not self.engine.chief:  # only process 0 writes OUTPUT
            private = self.engine.private_folder()
            self.metrics_path = private / checkpoints.METRICS
            self.tensorboard_dir = private / TENSORBOARD_FOLDER
        self.history = []
        self.real_tokens = {}  # batch index -> its real tokens
        self.evaluations = []
        self.start_step = 0
        self.global_rngs = None
        self.build_preset = preset  # the preset the task is built from

    # --- set-up ------------------------------------------------------------
    def _objective_and_corpus(self):
        from kzoo.core.family import preset_backbone_class
        from kzoo.core.tokenizer import Tokenizer
        from kzoo.corpus import tokenizer_hash
        from kzoo.presets import resolve
        from kzoo.pretraining.objectives import find_objective
        # The objectives register themselves when their streams import.
        import kzoo.pretraining.streams  # noqa: F401
        from kzoo.pretraining.streams.mixture import open_corpus
        corpus = open_corpus(self.corpus_entries)
        family = family_of(preset_backbone_class(resolve(self.preset)))
        try:
            objective = find_objective(family, self.options["objective"])
        except ValueError as error:
            raise PretrainingError(f"{self.preset}: {error}") from None
        tokenizer = Tokenizer.from_preset(self.preset)
        corpus.check_tokenizer(tokenizer_hash(tokenizer), str(self.preset))
        return objective, corpus

    def _latest_checkpoint(self):
        """`(folder, state)` of OUTPUT's newest checkpoint, or None."""
        found = checkpoints.list_checkpoints(self.output)
        if not found:
            return None
        folder = found[-1][1]
        return folder, checkpoints.read_state(folder)

    def _check_output(self, run_identity):
        """Refuse a run in OUTPUT made with other options or on another
        corpus (unless overwrite), and what is not a run's."""
        found = checkpoints.list_checkpoints(self.output)
        foreign = sorted(p.name for p in self.output.iterdir()
                         if p.name not in OWN_NAMES)
        if foreign and not found:
            raise PretrainingError(
                f"OUTPUT {self.output} holds files that are not a "
                f"pretraining run's ({', '.join(foreign[:3])}). Give an "
                "empty or new folder.")
        if not found:
            return None
        step, folder = found[-1]
        state = checkpoints.read_state(folder)
        theirs = state.get("identity") or {}
        differ = identity_differences(theirs, run_identity)
        if not differ:
            return folder
        if not self.options["overwrite"]:
            raise PretrainingError(self._other_run_message(
                folder, state, theirs, run_identity, differ))
        for name in (checkpoints.CHECKPOINTS, PRESET_FOLDER,
                     TENSORBOARD_FOLDER):
            shutil.rmtree(self.output / name, ignore_errors=True)
        self.metrics_path.unlink(missing_ok=True)
        if self.remote is not None:
            self.remote.remove_run((PRESET_FOLDER, TENSORBOARD_FOLDER,
                                    checkpoints.METRICS))
        return None

    def _other_run_message(self, folder, state, theirs, run_identity,
                           differ):
        from kzoo.pretraining.corpus_identity import describe_change
        said = []
        if "corpus" in differ:
            said.append("the corpus changed since: " + describe_change(
                state.get("corpus") or {}, self.corpus_record))
        said += [f"{k}: {theirs.get(k)!r} there, {run_identity.get(k)!r} "
                 "now" for k in differ if k != "corpus"][:4]
        where = " and its position in the corpus would point at other " \
            "text" if "corpus" in differ else ""
        return (f"Checkpoint {folder} is from another run ({'; '.join(said)})"
                f"{where}. Run with that run's options and corpus to resume "
                "it, give another OUTPUT, or pass --overwrite to delete its "
                "checkpoints and start over.")

    def _plan_and_check(self, given, corpus):
        """Settle the options, recipe and identity this run trains with,
        and whether it resumes: `(checkpoint folder or None, backbone
        overrides)`. What the newest checkpoint recorded (the draw groups,
        the schedule's steps) is the run's unless an option changes it; a
        run that starts over (--overwrite) plans afresh."""
        latest = self._latest_checkpoint()
        overrides = self._plan(given, corpus, latest and latest[1])
        resume_from = self._check_output(self.identity)
        if resume_from is None:
            if latest is not None:
                overrides = self._plan(given, corpus, None)
        else:
            self._check_max_steps(resume_from)
        return resume_from, overrides

    def _plan(self, given, corpus, state):
        """Set `options`, `recipe`, `identity`, `schedule_steps` and
        `planned_steps` from the given options and the newest checkpoint's
        `state` (None: a new run); returns the backbone overrides.

        The draw groups are the run's: the value it started with (its
        process count unless --draw-groups), whatever the process count
        now (streams/base.py: any process count makes the same batches).
        The recipe's defaults (the warmup's share) are resolved for the
        steps the run was first planned for, and the schedule spans the
        steps it was planned for (`_check_max_steps`)."""
        recorded = _recorded_steps(state)
        planned = given["max_steps"] if state is None else recorded[0]
        options, self.recipe, overrides = resolve_recipe_options(
            self.preset, dict(given, max_steps=planned), self.source)
        options["max_steps"] = given["max_steps"]
        self.planned_steps = planned
        self.schedule_steps = given["max_steps"] if state is None else \
            recorded[1]
        if state is not None and given["extend_schedule"]:
            self.schedule_steps = max(self.schedule_steps,
                                      given["max_steps"])
        recorded_groups = ((state or {}).get("identity") or {}).get(
            "draw_groups")
        options["draw_groups"] = (given["draw_groups"] or recorded_groups
                                  or self.engine.count)
        self.options = options
        from kzoo.pretraining.streams.mixture import corpus_identity
        self.identity = {
            **identity(options), "objective": self.objective.name,
            "preset": str(self.preset),
            "corpus_tokenizer": corpus.tokenizer_hash,
            **corpus_identity(corpus),  # a mixture's weights
            # The corpus' own hash (corpus_identity.py): a position in
            # the corpus means nothing in another one.
            "corpus": self.corpus_record["sha256"],
            "draw_groups": options["draw_groups"]}
        return overrides

    def _check_max_steps(self, folder):
        """Refuse a resumed run's --max-steps below its checkpoint, or
        past the end of a schedule that decays to it (`DECAYING`) unless
        --extend-schedule stretched the schedule there."""
        step = checkpoints.read_state(folder)["step"]
        steps, shape = self.options["max_steps"], self.options["schedule"]
        if steps < step:
            raise PretrainingError(
                f"--max-steps {steps}: checkpoint {folder} is at step {step}"
                f", past it. Give --max-steps {step} or more to go on, or "
                "--overwrite to start over.")
        if steps > self.schedule_steps and shape in DECAYING:
            from kzoo.pretraining.schedule import PretrainingSchedule
            now = PretrainingSchedule(
                1.0, self.options["warmup_steps"], steps,
                shape=shape, floor=self.recipe["schedule_floor"])
            raise PretrainingError(
                f"--max-steps {steps}: the run in {self.output} was planned "
                f"for {self.schedule_steps} steps and its {shape} learning "
                f"rate ends there; pass --extend-schedule to stretch its "
                f"decay to step {steps} (the rate at step {step} goes from "
                f"{self._rate_fraction(step):.3g} to "
                f"{now.rate_at(step):.3g} of the peak), or keep --max-steps "
                f"{self.schedule_steps}.")

    def _rate_fraction(self, step):
        """The run's planned rate at `step`, as a fraction of the peak."""
        from kzoo.pretraining.schedule import PretrainingSchedule
        return PretrainingSchedule(
            1.0, self.options["warmup_steps"], self.schedule_steps,
            shape=self.options["schedule"],
            floor=self.recipe["schedule_floor"]).rate_at(step)

    def _build(self, objective, corpus):
        import keras
        options = self.options
        keras.utils.set_random_seed(options["seed"])
        previous_policy = keras.config.dtype_policy()
        keras.config.set_dtype_policy(options["dtype"])
        # Built and compiled under this backend's engine (engines.py).
        try:
            with self.engine.scope():
                task = objective.make_task(
                    self.build_preset,
                    load_weights=not options["from_scratch"],
                    sequence_length=options["sequence_length"],
                    **objective_arguments(objective, options))
        finally:
            keras.config.set_dtype_policy(previous_policy)
        with self.engine.scope():
            self._compile(task)

    def _compile(self, task):
        from kzoo.pretraining.schedule import PretrainingSchedule
        from kzoo.training import make_optimizer
        options, recipe = self.options, self.recipe
        self.schedule = PretrainingSchedule(
            options["learning_rate"], options["warmup_steps"],
            self.schedule_steps, self.accumulation,
            shape=options["schedule"], floor=recipe["schedule_floor"])
        optimizer = make_optimizer(
            options["optimizer"], self.schedule,
            weight_decay=options["weight_decay"],
            clip_norm=options["clip_norm"],
            gradient_accumulation_steps=(
                self.accumulation if self.accumulation > 1 else None),
            beta_1=options["beta_1"], beta_2=options["beta_2"],
            epsilon=options["epsilon"], **recipe["optimizer_arguments"])
        task.compile(optimizer=optimizer)
        optimizer.build(task.trainable_variables)
        self.task = self.engine.prepare(task)
        self.stream = self._stream(self.objective, task, self.corpus,
                                   options["seed"])
        self._ramp_stream()
        # Every variable: the model's (SeedGenerator states included) and
        # the optimizer's (its iterations, moments, accumulators).
        seen = set()
        self.variables = []
        for variable in list(task.variables) + list(optimizer.variables):
            if id(variable) not in seen:
                seen.add(id(variable))
                self.variables.append(variable)
        # What checkpoints restore them by (checkpoints.variable_keys).
        own = len({id(v) for v in task.variables})
        self.variable_keys = checkpoints.variable_keys(
            self.variables[:own], self.variables[own:])
        self.parameters = sum(int(np.prod(v.shape))
                              for v in task.trainable_variables)
        self.tokens_per_step = (options["batch_size"] * self.accumulation
                                * options["sequence_length"])
        self._count_flops(task)

    def _ramp_stream(self):
        """A --batch-ramp: the training stream's batch grows with the
        step (`kzoo.pretraining.batch_ramp`); checked against the
        processes, row groups and the objective first."""
        if not self.options["batch_ramp"]:
            return
        from kzoo.pretraining.batch_ramp import BatchRamp
        ramp = BatchRamp(*self.options["batch_ramp"],
                         self.options["batch_size"], self.accumulation)
        ramp.check_divides(self.engine.count, "processes")
        ramp.check_divides(self.options["draw_groups"], "row groups "
                           "(--draw-groups)")
        if not self.stream.order_examples:
            raise PretrainingError(
                f"--batch-ramp ({self.source}): the {self.objective.name} "
                "objective's batches continue each other row by row (BPTT),"
                " so their rows cannot change; drop --batch-ramp.")
        self.stream.batch_size_at = ramp.rows_of_batch

    def _count_flops(self, task):
        """FLOPs per real token and the peak FLOP/s, for the MFU
        (`throughput.py`); `flops_per_token` None where not counted."""
        from kzoo.pretraining import throughput
        self.non_embedding_parameters = throughput.non_embedding_parameters(
            task.trainable_variables)
        shape = throughput.transformer_shape(task.backbone.get_config())
        self.flops_per_token = None if shape is None else \
            throughput.flops_per_token(self.non_embedding_parameters, *shape,
                                       self.options["sequence_length"])
        peak = self.options["peak_tflops"]
        if peak == "auto":
            name = throughput.accelerator_name()
            peak = throughput.peak_tflops_of(name)
            if peak is None and self.engine.chief:
                print(f"kzoo pretrain: --peak-tflops auto does not know "
                      f"{name or 'this machine (no GPU or TPU)'}; no MFU "
                      "(give --peak-tflops N, the device's TFLOP/s).")
        if peak is not None and self.flops_per_token is None and \
                self.engine.chief:
            print("kzoo pretrain: MFU is counted for one-stack "
                  "transformers only; none for "
                  f"{type(task.backbone).__name__}.")
        self.peak_flops = None if peak is None or \
            self.flops_per_token is None else peak * 1e12

    def real_tokens_of_step(self, step):
        """The real (non-padding) tokens optimizer step `step` (from 0)
        trained on, over every process (this one's rows times the process
        count: their mean, not each one's)."""
        first = step * self.accumulation
        counts = [self.real_tokens.pop(i, 0)
                  for i in range(first, first + self.accumulation)]
        return sum(counts) * self.engine.count

    def _stream(self, objective, task, corpus, seed):
        options = self.options
        from kzoo.pretraining.streams.mixture import make_stream
        # This process' rows of each global batch (streams/base.py).
        return make_stream(
            objective, task, corpus, options["batch_size"], seed,
            self.engine.index, self.engine.count, options["draw_groups"],
            options["sequence_length"],
            **objective_arguments(objective, options))

    def _check_corpus_size(self, corpus):
        options = self.options
        sentences = sum(s.record["sentences"] for s in corpus.shards)
        if sentences < options["batch_size"] and corpus.num_tokens < \
                options["batch_size"] * options["sequence_length"]:
            raise PretrainingError(
                f"Corpus {self.corpus_folder} is smaller than one batch "
                f"({corpus.num_tokens} tokens in {sentences} sentences; a "
                f"batch is {options['batch_size']} examples of up to "
                f"{options['sequence_length']} tokens). Prepare a larger "
                "corpus or lower --batch-size.")

    def _evaluation_batches(self, objective):
        """A fixed list of batches from the corpus' validation split, or
        None (no --eval-every, or no validation split)."""
        if not self.options["eval_every"]:
            return None
        from kzoo.corpus import CorpusError
        from kzoo.pretraining.streams.mixture import open_corpus
        try:
            held_out = open_corpus(self.corpus_entries, split="validation")
        except (TypeError, CorpusError):
            print(f"kzoo pretrain: {self.corpus_folder} has no validation "
                  "split; --eval-every is ignored (prepare the corpus with "
                  "a validation split to evaluate).")
            return None
        stream = self._stream(objective, self.task, held_out,
                              self.options["seed"])
        return [stream.batch(i) for i in range(self.options["eval_batches"])]

    # --- checkpoints -------------------------------------------------------
    def _restore(self, folder):
        state = checkpoints.read_state(folder)
        # By key (the path, Keras' per-process numbering taken out), each
        # variable checked to be there with its shape.
        indices = checkpoints.match_variables(
            folder, state, self.variable_keys,
            [v.path for v in self.variables],
            [v.shape for v in self.variables])
        arrays = checkpoints.read_arrays(folder, state["dtypes"], indices)
        for variable, array in zip(self.variables, arrays):
            variable.assign(array)
        self.stream.restore(state["stream"])
        # Restored when `fit` begins its steps (CheckpointSaver), after
        # Keras' own set-up, which may draw from them.
        self.global_rngs = state.get("global_rngs")
        self.start_step = state["step"]
        # metrics.jsonl: the lines the checkpoint's steps wrote; lines past
        # the checkpoint (written before the run died) go.
        size = state["metrics_bytes"]
        if self.metrics_path.exists() and \
                self.metrics_path.stat().st_size >= size:
            with open(self.metrics_path, "r+b") as f:
                f.seek(size)
                after = f.read()  # only what the checkpoint did not count
                f.truncate(size)
                # A run's end evaluation comes after its last checkpoint
                # (at the same step): kept, when it was written whole.
                end = [line + b"\n" for line in after.split(b"\n")[:-1]
                       if _evaluation_at(line, self.start_step)]
                f.seek(size)
                f.write(b"".join(end))
            # The evaluations those lines hold: a resumed run (or one found
            # finished) reports its last as a fresh run would.
            lines = self.metrics_path.read_text(encoding="utf-8")
            self.evaluations = [record for record in
                                map(json.loads, lines.splitlines())
                                if "eval_loss" in record]
        else:
            self.metrics_path.write_text("")
            print(f"kzoo pretrain: {self.metrics_path} is shorter than "
                  f"checkpoint {folder.name} recorded; it restarts at step "
                  f"{self.start_step}.")
        return state

    def save_checkpoint(self, step, metrics):
        """Checkpoint `step` (called by CheckpointSaver at an epoch end)."""
        metrics_bytes = metrics.flush_metrics()
        with self.feed_lock:
            stream_state = self.stream.state_before(step * self.accumulation)
        arrays = [self.engine.to_numpy(v) for v in self.variables]
        state = {
            "step": step, "stream": stream_state,
            "identity": self.identity, "objective": self.objective.name,
            "options": self.options, "corpus": self.corpus_record,
            "planned_steps": self.planned_steps,
            "schedule_steps": self.schedule_steps,
            "variables": [v.path for v in self.variables],
            "keys": self.variable_keys,
            "shapes": [list(v.shape) for v in self.variables],
            "dtypes": [str(a.dtype) for a in arrays],
            "metrics_bytes": metrics_bytes,
            "global_rngs": rng.global_states(),
            "losses": list(metrics.interval_losses),
        }
        metrics.interval_losses = []
        if self.engine.chief:
            folder = checkpoints.write_checkpoint(self.output, step, arrays,
                                                  state)
            checkpoints.prune(self.output, self.options["keep_checkpoints"])
            if self.remote is not None:
                self.remote.publish_checkpoint(
                    folder, self.metrics_path,
                    self.options["keep_checkpoints"])
        self.engine.barrier(f"checkpoint {step}")

    # --- the steps ---------------------------------------------------------
    def _batches(self, first):
        """A function making generators of the batches from batch `first`
        on, for `fit` (`Engine.feed`). Each call starts over at `first`
        (the stream restored to its state there) and stops the generators
        made before it: a distributed dataset calls it once per iterator,
        and Keras' TensorFlow `fit` under a strategy makes two, the first
        to build the model from one batch (engines.py, `feed`)."""
        from kzoo.corpus import CorpusError
        from kzoo.pretraining.throughput import real_tokens
        start = self.stream.state_before(first)
        latest = 0  # the generator made last

        def batches():
            nonlocal latest
            with self.feed_lock:
                latest += 1
                mine = latest
                self.stream.restore(copy.deepcopy(start))
            index = first
            while True:
                with self.feed_lock:
                    if latest != mine:  # a later generator took over
                        return
                    try:
                        batch = self.stream.batch(index)
                    except CorpusError as error:  # a mixture's caps reached
                        self.feed_error = error
                        raise
                    self.real_tokens[index] = real_tokens(batch)
                index += 1
                yield batch

        return batches

    def learning_rate_at(self, step):
        return self.schedule.rate_at(step)

    def note_step(self, record):
        self.history.append(record)

    def note_evaluation(self, record):
        self.evaluations.append(record)

    def train(self):
        import keras

        from kzoo.pretraining.callbacks import RunMetrics
        from kzoo.pretraining.streams.mixture import mixture_progress
        self.objective, corpus = self._objective_and_corpus()
        self._check_corpus_size(corpus)
        self.corpus_record = corpus_record(corpus)
        given = self.options
        engine = self.engine
        engine.setup(self._backbone_class())
        if engine.chief:
            resume_from, overrides = self._plan_and_check(given, corpus)
            checkpoints.remove_partials(self.output)
        engine.barrier("output checked")
        if not engine.chief:
            resume_from, overrides = self._plan_and_check(given, corpus)
        options = self.options
        self._temporary = None
        if overrides:
            self._temporary = tempfile.TemporaryDirectory(
                prefix="kzoo-pretrain-preset-")
            from kzoo.presets import resolve
            from kzoo.pretraining.architecture import write_derived_preset
            self.build_preset = str(write_derived_preset(
                resolve(self.preset), overrides,
                Path(self._temporary.name) / "preset"))
        self.corpus = corpus
        self._build(self.objective, corpus)
        self.feed_lock = threading.Lock()
        resumed = None
        if resume_from is not None:
            self._restore(resume_from)
            resumed = self.start_step
        else:
            self.metrics_path.write_text("")
        max_steps = options["max_steps"]
        start = time.perf_counter()
        if self.start_step < max_steps:
            evaluation = self._evaluation_batches(self.objective)
            interval = math.gcd(options["checkpoint_every"],
                                options["eval_every"] or 0, self.start_step)
            metrics = RunMetrics(self)
            fit_kwargs = {}
            if evaluation is not None:
                fit_kwargs = {
                    "validation_data": FixedBatches(evaluation),
                    "validation_freq": options["eval_every"] // interval}
            with engine.scope():
                self._fit(metrics, interval, fit_kwargs)
            # The end's evaluation, unless fit's last "epoch" (cut short
            # at max_steps) scored the held-out set already.
            if evaluation is not None and max_steps % options["eval_every"] \
                    and not (self.evaluations and
                             self.evaluations[-1]["step"] == max_steps):
                metrics.on_train_begin()
                with engine.scope():
                    results = keras.Model.evaluate(
                        self.task, self._feed_evaluation(evaluation),
                        verbose=0, return_dict=True)
                metrics.write_evaluation(results)
                metrics.on_train_end()
        seconds = time.perf_counter() - start
        preset_dir = self.output / PRESET_FOLDER
        if engine.chief:
            preset_dir = self._save_preset()
            if self.remote is not None:
                self.remote.publish_folder(self.tensorboard_dir,
                                           TENSORBOARD_FOLDER)
                preset_dir = self.remote.publish_folder(preset_dir,
                                                        PRESET_FOLDER)
        elif self.remote is not None:
            preset_dir = storage.join(self.remote.url, PRESET_FOLDER)
        engine.barrier("preset saved")
        trained = [r for r in self.history]
        if self._temporary is not None:
            self._temporary.cleanup()
        summary = {
            "steps": max_steps, "resumed_from": resumed,
            "steps_this_run": len(trained),
            "loss": trained[-1]["loss"] if trained else None,
            # Ids of the corpus left out of the examples served, by
            # reason (streams/base.py: BatchStream.cut); {} when none.
            "ids_cut": dict(self.stream.ids_cut),
            # A mixture's corpora: examples and epoch of each; else None.
            "corpora": mixture_progress(
                self.stream, options["max_steps"] * self.accumulation),
            # Real (non-padding) tokens.
            "tokens_per_second": (
                sum(r["tokens"] for r in trained) / seconds
                if trained and seconds > 0 else None),
            "recipe": {name: options[name]
                       for name in RECIPE_OPTIONS + ("mask_rate",)},
            "evaluation": self.evaluations[-1] if self.evaluations else None,
            "preset": str(preset_dir),
            "output": self.remote.url if self.remote else str(self.output),
            "parameters": self.parameters,
            "process_index": engine.index, "process_count": engine.count,
        }
        return summary

    def _backbone_class(self):
        from kzoo.core.family import preset_backbone_class
        from kzoo.presets import resolve
        return preset_backbone_class(resolve(self.preset))

    def _feed_evaluation(self, evaluation):
        if self.engine.strategy is None:
            return FixedBatches(evaluation)
        return self.engine.feed(lambda: iter(evaluation))

    def _fit(self, metrics, interval, fit_kwargs):
        import keras

        from kzoo.pretraining.callbacks import CheckpointSaver
        options = self.options
        max_steps = options["max_steps"]
        if "validation_data" in fit_kwargs:
            fit_kwargs["validation_data"] = self._feed_evaluation(
                fit_kwargs["validation_data"].batches)
        self.feed_error = None
        try:
            keras.Model.fit(
                self.task, self.engine.feed(
                    self._batches(self.start_step * self.accumulation),
                    training=True,
                    variable_rows=options["batch_ramp"] is not None),
                steps_per_epoch=interval * self.accumulation,
                epochs=math.ceil(max_steps / interval),
                initial_epoch=self.start_step // interval, verbose=0,
                shuffle=False,
                callbacks=[metrics, CheckpointSaver(self, metrics)],
                **fit_kwargs)
        except Exception:
            # On TensorFlow the batches' generator runs inside tf.data,
            # which reports its error as its own: the stream's is the one
            # that says what to do (e.g. every corpus' epoch cap reached).
            if self.feed_error is not None:
                raise self.feed_error from None
            raise

    def _save_preset(self):
        """The trained task as a preset, with the preset's preprocessor so
        that `from_preset` gives a task that reads text."""
        task = self.task
        preset_dir = self.output / PRESET_FOLDER
        if task.preprocessor is None and \
                getattr(type(task), "preprocessor_cls", None) is not None:
            try:
                task.preprocessor = type(task).preprocessor_for(
                    self.build_preset,
                    sequence_length=self.options["sequence_length"])
            except Exception as error:  # noqa: BLE001 - saved without it
                print(f"kzoo pretrain: the preset is saved without a "
                      f"preprocessor ({error}).")
        if preset_dir.exists():
            shutil.rmtree(preset_dir)
        task.save_to_preset(preset_dir)
        return preset_dir


def identity_differences(theirs, ours):
    """The identity entries a checkpoint's (`theirs`) and this run's
    differ in, sorted. `max_steps` (an older kzoo's identity held it) is
    not one: `Run._check_max_steps` judges the steps; an entry this kzoo
    added (`NEWER_IDENTITY`) is not compared with a checkpoint made
    before it."""
    names = (set(theirs) | set(ours)) - {"max_steps"}
    return sorted(name for name in names
                  if theirs.get(name) != ours.get(name)
                  and not (name in NEWER_IDENTITY and name not in theirs))


def _recorded_steps(state):
    """`(planned, schedule)` steps of a checkpoint's run: what its
    recipe was resolved for, and what its schedule spans (an older
    kzoo's checkpoint: its max_steps, both); None for a new run."""
    if state is None:
        return None
    old = (state.get("identity") or {}).get("max_steps")
    return (state.get("planned_steps") or old,
            state.get("schedule_steps") or old)


def family_of(backbone_cls):
    """A backbone class' family name (`kzoo.models.<family>`)."""
    if backbone_cls.__module__.startswith("kzoo.models."):
        return backbone_cls.__module__.split(".")[2]
    return getattr(backbone_cls, "family", None)


def resolve_recipe_options(preset, options, source="arguments"):
    """`options` (checked by `resolve_options`) completed with the
    preset family's recipe (`kzoo.pretraining.recipes`) for the model's
    size, and checked against it: an argument the optimizer does not
    have, a schedule that cannot take the warmup, a `[model]` table the
    backbone refuses. Returns `(options, recipe, backbone overrides)`:
    the options to train with, the resolved recipe (with its size, source
    and masking rate), and the backbone config the run changes."""
    from kzoo.core.family import preset_backbone_class
    from kzoo.core.tokenizer import Tokenizer
    from kzoo.presets import resolve
    from kzoo.pretraining.architecture import (backbone_overrides,
                                               check_architecture)
    from kzoo.pretraining.recipes import resolve_recipe
    from kzoo.training.optimizers import OPTIMIZER_ARGUMENTS
    found = resolve(preset)
    backbone_cls = preset_backbone_class(found)
    preset_config = found.json("config.json")["config"]
    overrides = backbone_overrides(backbone_cls, preset_config, options)
    check_architecture(
        backbone_cls, preset_config, overrides, options,
        Tokenizer.from_preset(preset).vocabulary_size if options["model"]
        else None, source)
    config = {**preset_config, **overrides}
    try:
        recipe = resolve_recipe(family_of(backbone_cls),
                                config.get("hidden_dim"), options)
    except ValueError as error:
        raise PretrainingError(f"{preset}: {error}") from None
    resolved = {**options, **{name: recipe[name]
                              for name in RECIPE_OPTIONS}}
    resolved["mask_rate"] = objective_mask_rate(
        _objective_of(family_of(backbone_cls), options, preset), options,
        recipe["mask_rate"], source)
    recipe["masking_rate"] = resolved["mask_rate"]
    if resolved["clip_norm"] == 0:  # --clip-norm 0: none
        resolved["clip_norm"] = None
    takes = OPTIMIZER_ARGUMENTS[resolved["optimizer"]]
    foreign = [name for name in ("beta_1", "beta_2", "epsilon")
               if options[name] is not None and name not in takes]
    if foreign:
        flags = ", ".join("--" + n.replace("_", "-") for n in foreign)
        raise PretrainingError(
            f"{flags} ({source}): the {resolved['optimizer']} optimizer has "
            f"no {', '.join(foreign)} (its own: {', '.join(takes) or 'none'})"
            "; drop it or pick --optimizer adamw or lamb.")
    for name in ("beta_1", "beta_2", "epsilon"):
        if name not in takes:
            resolved[name] = None
    warmup, steps = resolved["warmup_steps"], resolved["max_steps"]
    if warmup >= steps:
        raise PretrainingError(
            f"warmup_steps ({warmup}) must be below max_steps ({steps}) "
            f"({source}).")
    if resolved["schedule"] == "one_cycle" and options["warmup_steps"]:
        raise PretrainingError(
            f"--warmup-steps ({source}): the one_cycle schedule rises over "
            "the first half of the run; drop --warmup-steps or pick "
            "--schedule linear.")
    if resolved["schedule"] == "inverse_sqrt" and warmup < 1:
        raise PretrainingError(
            f"--schedule inverse_sqrt ({source}) holds the peak for "
            "--warmup-steps steps and decays after; give --warmup-steps >= "
            "1.")
    return resolved, recipe, overrides


def _objective_of(family, options, preset):
    from kzoo.pretraining.objectives import find_objective
    import kzoo.pretraining.streams  # noqa: F401 - registers them
    try:
        return find_objective(family, options["objective"])
    except ValueError as error:
        raise PretrainingError(f"{preset}: {error}") from None


def objective_mask_rate(objective, options, recipe_rate, source):
    """The share the run's objective masks (`mask_rate`): the option,
    else the config file's `objective_options` entry of that name, else
    the family's recipe (`recipe_rate`, the option folded in); None for
    an objective that masks nothing, which refuses the option."""
    name, given = objective.mask_rate_option, options["mask_rate"]
    if name is None:
        if given is not None:
            raise PretrainingError(
                f"--mask-rate ({source}): the {objective.name} objective "
                "masks nothing; drop --mask-rate.")
        return None
    own = options["objective_options"].get(name)
    if own is None:
        return recipe_rate
    if given is not None:
        raise PretrainingError(
            f"--mask-rate and objective_options' {name} ({source}) both "
            "set the share masked; give it once, as --mask-rate.")
    return own


def objective_arguments(objective, options):
    """The objective's options for its makers: its defaults, the config
    file's `objective_options` over them, and the run's `mask_rate` under
    the objective's own name for it."""
    arguments = {**objective.options, **options["objective_options"]}
    if objective.mask_rate_option is not None and \
            options.get("mask_rate") is not None:
        arguments[objective.mask_rate_option] = options["mask_rate"]
    return arguments


def resolved_run_options(preset, config=None, **options):
    """The options `pretrain(preset, ..., config, **options)` would train
    with, the family's recipe filled in (what `kzoo pretrain
    --print-recipe` prints), without a corpus or any training."""
    given = read_config_file(config) if config else {}
    given.update({k: v for k, v in options.items() if v is not None})
    source = f"config file {config}" if config else "arguments"
    resolved, recipe, _ = resolve_recipe_options(
        preset, resolve_options(given, source), source)
    return {**resolved, "recipe": {
        "size": recipe["size"], "masking_rate": recipe["masking_rate"],
        "schedule_floor": recipe["schedule_floor"],
        "optimizer_arguments": recipe["optimizer_arguments"],
        "source": recipe["recipe_source"]}}


def _py_dataset_base():
    import keras
    return keras.utils.PyDataset


class FixedBatches:
    """A fixed list of batches as a `keras.utils.PyDataset` (made on first
    use so that importing this module does not import Keras)."""

    def __new__(cls, batches):
        base = _py_dataset_base()

        class _Batches(base):
            def __init__(self):
                super().__init__()
                self.batches = batches

            def __len__(self):
                return len(self.batches)

            def __getitem__(self, index):
                return self.batches[index]

        return _Batches()


def remove_run(output):
    """Delete a run's own files from `output` (not the folder's others)."""
    for name in OWN_NAMES:
        path = Path(output) / name
        if path.is_dir():
            shutil.rmtree(path)
        elif path.exists():
            os.unlink(path)
