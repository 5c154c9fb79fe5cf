"""Checkpoints of a pretraining run, written atomically, and the run's lock.

Layout of a run's OUTPUT folder:

    run.lock                      held (fcntl.flock) by the running process;
                                  holds its pid
    metrics.jsonl                 one JSON line per optimizer step (and per
                                  evaluation)
    checkpoints/step-000000123/   one complete checkpoint:
        variables.npz             every variable of the model and the
                                  optimizer, in `variables` order
        state.json                the step, the variables' paths and
                                  keys (`variable_keys`: what they are
                                  restored by), the stream's position,
                                  the options
    preset/                       the trained model, at the end

A checkpoint is written into `checkpoints/.step-000000123.partial-PID`,
each file flushed and fsync'ed, then renamed into place (one rename: a
reader sees no checkpoint or a whole one) and the parent folder fsync'ed.
Only `step-<9 digits>` folders are checkpoints; a `.partial` folder is
what a killed write left, ignored and removed by the next run.

Why not `keras.callbacks.BackupAndRestore` (read on Keras 3.15.1):
- it keeps one backup (two with `double_checkpoint`), not the last K;
- it overwrites `latest.weights.h5` in place, then writes its metadata:
  a kill during the write leaves a damaged file, and one between the two
  files new weights with the old epoch;
- its metadata holds the epoch and the batch, but on restore it reads
  the epoch alone (`_initial_epoch`): a run stopped mid-epoch starts the
  epoch over, training again on batches it has seen;
- it saves neither the input pipeline's position nor any RNG state beyond
  what `save_weights` holds, and deletes the backup when `fit` ends.
`model.save_weights` itself writes in place too; the arrays here are
`model.variables + optimizer.variables` (in Keras 3 these include every
layer's `SeedGenerator` state: dropout's random draws, and the optimizer's
iteration count and accumulators), saved with NumPy.
"""

import errno
import json
import os
import re
import shutil
from pathlib import Path

import numpy as np

from kzoo.pretraining.config import PretrainingError

FORMAT = "kzoo-pretraining-checkpoint"
FORMAT_VERSION = 1
CHECKPOINTS = "checkpoints"
LOCK = "run.lock"
METRICS = "metrics.jsonl"
_NAME = re.compile(r"^step-(\d{9})$")


def checkpoint_name(step):
    return f"step-{step:09d}"


def checkpoints_dir(output):
    return Path(output) / CHECKPOINTS


def list_checkpoints(output):
    """`[(step, folder)]` of the complete checkpoints, oldest first."""
    folder = checkpoints_dir(output)
    if not folder.is_dir():
        return []
    found = []
    for child in folder.iterdir():
        match = _NAME.match(child.name)
        if match and (child / "state.json").is_file():
            found.append((int(match.group(1)), child))
    return sorted(found)


def remove_partials(output):
    """Remove what killed writes left (only the lock's holder calls it)."""
    folder = checkpoints_dir(output)
    if folder.is_dir():
        for child in folder.iterdir():
            if child.name.startswith(".") and ".partial" in child.name:
                shutil.rmtree(child, ignore_errors=True)


def _fsync_dir(path):
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _storable(array):
    """NumPy can store every dtype but bfloat16 (ml_dtypes'): kept as its
    bits, with the dtype's name in state.json."""
    array = np.asarray(array)
    if array.dtype.name == "bfloat16":
        return array.view(np.uint16)
    return array


def write_arrays(path, arrays):
    with open(path, "wb") as f:
        np.savez(f, **{f"v{i:05d}": _storable(a)
                       for i, a in enumerate(arrays)})
        f.flush()
        os.fsync(f.fileno())


def write_checkpoint(output, step, arrays, state):
    """Write checkpoint `step` atomically; returns its folder.

    Args:
        arrays: the variables' values (NumPy), in order.
        state: a JSON-serialisable dict (state.json): the step, the
            stream's state, the options, this interval's losses and how
            many bytes of metrics.jsonl the steps so far wrote (a resumed
            run cuts the file there).
    """
    folder = checkpoints_dir(output)
    folder.mkdir(parents=True, exist_ok=True)
    final = folder / checkpoint_name(step)
    staging = folder / f".{final.name}.partial-{os.getpid()}"
    if staging.exists():
        shutil.rmtree(staging)
    staging.mkdir()
    try:
        write_arrays(staging / "variables.npz", arrays)
        # state.json last: its presence marks the folder complete even for
        # a reader that ignored the name.
        with open(staging / "state.json", "w", encoding="utf-8") as f:
            json.dump(dict(state, format=FORMAT,
                           format_version=FORMAT_VERSION), f, indent=1,
                      sort_keys=True)
            f.flush()
            os.fsync(f.fileno())
        _fsync_dir(staging)
        if final.exists():  # a step written before, by a run since refused
            shutil.rmtree(final)
        os.rename(staging, final)
        _fsync_dir(folder)
    except OSError as error:
        shutil.rmtree(staging, ignore_errors=True)
        if error.errno in (errno.ENOSPC, errno.EDQUOT):
            raise PretrainingError(
                f"The disk is full: checkpoint {final} could not be written "
                f"({error.strerror}). Free space on {folder}'s disk (or "
                "lower --keep-checkpoints) and run the same command again: "
                "it resumes from the last complete checkpoint.") from None
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return final


def prune(output, keep):
    """Delete all but the newest `keep` complete checkpoints."""
    for _, folder in list_checkpoints(output)[:-keep]:
        shutil.rmtree(folder, ignore_errors=True)


def read_state(folder):
    path = Path(folder) / "state.json"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as error:
        raise PretrainingError(
            f"Checkpoint {path} cannot be read ({error}). Delete "
            f"{folder} to resume from the one before.") from None
    if state.get("format") != FORMAT:
        raise PretrainingError(f"{path} is not a kzoo pretraining "
                               "checkpoint.")
    if state.get("format_version", 0) > FORMAT_VERSION:
        raise PretrainingError(
            f"{path} was written by a newer kzoo; upgrade kzoo.")
    return state


# A path component: a name and the number Keras may have appended.
_NUMBERED = re.compile(r"^(.*?)(?:_(\d+))?$")
# Paths named at most in a message, per kind of mismatch.
_SHOWN = 4


def variable_keys(model_variables, optimizer_variables):
    """The names a checkpoint stores its variables under and restores
    them by: each variable's path, with what differs between two builds
    of the same model taken out.

    Keras names an object that is given no name after its class and a
    count kept per process (`seed_generator_7`, `adam_w_2`), so the same
    model built again in one process, or after other models, has other
    paths. Here every path component is renumbered by its first
    appearance among the components of the same stem
    (`seed_generator_7` -> `seed_generator#0` wherever it comes first),
    which is the same for every build of one model and keeps distinct
    components distinct. An optimizer's slot (`adam_w/
    mlm_head_bias_momentum`: Keras names it after its variable's path)
    is named after its variable's key: `adam_w#0/mlm_head#0/bias#0>
    momentum`.
    """
    by_flat = {v.path.replace("/", "_") + "_": v for v in model_variables
               if v.trainable}
    split = [v.path.split("/") for v in model_variables]
    slots = []
    for variable in optimizer_variables:
        *owner, name = variable.path.split("/")
        found = max((flat for flat in by_flat if name.startswith(flat)),
                    key=len, default=None)
        split.append(owner if found else owner + [name])
        slots.append((found, name[len(found):] if found else None))
    ranks = {}
    for components in split:
        for component in components:
            stem = _NUMBERED.match(component).group(1)
            ranks.setdefault(stem, {}).setdefault(
                component, len(ranks.get(stem, {})))
    keys = ["/".join(f"{_NUMBERED.match(c).group(1)}#"
                     f"{ranks[_NUMBERED.match(c).group(1)][c]}"
                     for c in components) for components in split]
    model_keys = dict(zip((id(v) for v in model_variables), keys))
    count = len(model_variables)
    for index, (found, slot) in enumerate(slots):
        if found:
            keys[count + index] += "/" + model_keys[id(by_flat[found])] + \
                ">" + slot
    # Two variables under one path (two layers given the same name in
    # one scope) keep apart by their order.
    seen = {}
    for index, key in enumerate(keys):
        seen[key] = seen.get(key, -1) + 1
        if seen[key]:
            keys[index] = f"{key}~{seen[key]}"
    return keys


def match_variables(folder, state, keys, paths, shapes):
    """For each of this run's variables (`keys`, `paths`, `shapes`), the
    index of its array in checkpoint `folder` (its `state`), matched by
    key; a `PretrainingError` naming the variables the checkpoint lacks,
    holds beyond this model's, or holds with another shape. A checkpoint
    from before the keys (format 1 without them) is matched by position,
    its shapes checked."""
    saved_shapes = [tuple(shape) for shape in state["shapes"]]
    shapes = [tuple(shape) for shape in shapes]
    saved_keys = state.get("keys")
    if saved_keys is None:
        if saved_shapes != shapes:
            raise PretrainingError(
                f"Checkpoint {folder} holds other variables than this "
                "model's (was kzoo or the model changed?). Pass --overwrite "
                "to start over, or give another OUTPUT.")
        return list(range(len(keys)))
    saved = {key: index for index, key in enumerate(saved_keys)}
    here = set(keys)
    missing = [path for key, path in zip(keys, paths) if key not in saved]
    extra = [path for key, path in zip(saved_keys, state["variables"])
             if key not in here]
    other = [f"{path} {saved_shapes[saved[key]]} there, {shape} here"
             for key, path, shape in zip(keys, paths, shapes)
             if key in saved and saved_shapes[saved[key]] != shape]
    said = [f"{what}: {', '.join(names[:_SHOWN])}"
            + (f" and {len(names) - _SHOWN} more"
               if len(names) > _SHOWN else "")
            for what, names in (("not in the checkpoint", missing),
                                ("not in this model", extra),
                                ("other shapes", other)) if names]
    if said:
        raise PretrainingError(
            f"Checkpoint {folder} does not fit this model ({'; '.join(said)}"
            "): was the model, its options or kzoo changed? Run with the "
            "options the checkpoint was made with, pass --overwrite to start "
            "over, or give another OUTPUT.")
    return [saved[key] for key in keys]


def read_arrays(folder, dtypes, indices=None):
    """The variables' values, restored to `dtypes` (their names):
    arrays `indices` of the checkpoint (`match_variables`; all, in order,
    when None), `dtypes` being theirs."""
    path = Path(folder) / "variables.npz"
    if indices is None:
        indices = range(len(dtypes))
    try:
        with np.load(path, allow_pickle=False) as data:
            arrays = [data[f"v{i:05d}"] for i in indices]
    except (OSError, ValueError, KeyError) as error:
        raise PretrainingError(
            f"Checkpoint {path} cannot be read ({error}). Delete "
            f"{folder} to resume from the one before.") from None
    restored = []
    for array, dtype in zip(arrays, [dtypes[i] for i in indices]):
        if dtype == "bfloat16":
            import ml_dtypes
            array = array.view(ml_dtypes.bfloat16)
        restored.append(array)
    return restored


class RunLock:
    """An exclusive `fcntl.flock` on OUTPUT/run.lock holding the pid: a
    second run on the same OUTPUT refuses, naming the first's pid. The
    kernel drops the lock when its process dies, `kill -9` included."""

    def __init__(self, output):
        self.path = Path(output) / LOCK
        self.file = None

    def acquire(self):
        import fcntl
        self.path.parent.mkdir(parents=True, exist_ok=True)
        f = open(self.path, "a+", encoding="utf-8")
        try:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            f.seek(0)
            pid = f.read().strip() or "unknown"
            f.close()
            raise PretrainingError(
                f"Another run (pid {pid}) is writing {self.path.parent} "
                f"(it holds {self.path}). Wait for it to end, stop it, or "
                "give this run another OUTPUT folder.") from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self.file = f
        return self

    def release(self):
        if self.file is not None:
            import fcntl
            fcntl.flock(self.file.fileno(), fcntl.LOCK_UN)
            self.file.close()
            self.file = None

    def __enter__(self):
        return self.acquire()

    def __exit__(self, *exc):
        self.release()
