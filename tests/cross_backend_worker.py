"""Run kzoo models on another Keras backend, for cross-backend tests.

The backend is fixed when Keras is imported, so a test on backend A runs
this file in a subprocess with `KERAS_BACKEND=B`:

    python tests/cross_backend_worker.py job.json

`job.json` holds a list of steps, each either

    {"op": "run",  "class": "BertBackbone", "preset": DIR,
     "inputs": NPZ | "texts": [...], "output": NPZ}
        load `class.from_preset(DIR)`, run it (a backbone is called on the
        arrays in NPZ, a task predicts on raw `texts`), write its outputs
        and weights to NPZ;
    {"op": "make", "class": ..., "config": {...} | "task": {...},
     "preset": DIR, ...run fields...}
        build a model with random weights (this backend's initialisers),
        `save_to_preset(DIR)`, then do "run" on the saved preset;
    {"op": "train", "model": KERAS_FILE, "data": NPZ, "epochs": N,
     "learning_rate": LR, "output": NPZ}
        load a task saved in Keras' format, fit it (without its
        preprocessor) with plain SGD on the preprocessed arrays in NPZ
        (`pack` layout: one batch, in order), write its losses and
        weights to NPZ;
    {"op": "convert", "source": DIR, "preset": DIR}
        `kzoo.convert.hf_to_preset(source, preset)` there.

The test imports the same `make`/`run` functions to do its own side in
process, so both sides follow one code path, and starts the other
backends' workers with `start` and `finish`. Nothing here knows a model
family: classes are looked up by name on the `kzoo` module.
"""

import json
import os
import re
import sys

import numpy as np


def _kzoo_class(name):
    import kzoo
    return getattr(kzoo, name)


def _flatten(outputs):
    import keras
    if isinstance(outputs, dict):
        return {k: keras.ops.convert_to_numpy(v) for k, v in outputs.items()}
    return {"output": keras.ops.convert_to_numpy(outputs)}


def run(step):
    """Load the preset, run the model, save outputs and weights."""
    import keras
    cls = _kzoo_class(step["class"])
    model = cls.from_preset(step["preset"])
    if "texts" in step:
        outputs = model.predict(step["texts"], batch_size=len(step["texts"]),
                                verbose=0)
    else:
        with np.load(step["inputs"]) as data:
            inputs = {k: data[k] for k in data.files}
        outputs = model.predict_on_batch(inputs)  # compiled, as in `train`
    arrays = {f"out/{k}": v for k, v in _flatten(outputs).items()}
    for weight in model.weights:
        arrays[f"weight/{weight.path}"] = keras.ops.convert_to_numpy(weight)
    np.savez(step["output"], **arrays)
    return arrays


def make(step):
    """Build with random weights, save as a preset, then `run` it."""
    cls = _kzoo_class(step["class"])
    if "task" in step:  # {"backbone_class", "backbone", "preprocessor"...}
        spec = step["task"]
        backbone = _kzoo_class(spec["backbone_class"])(**spec["backbone"])
        preprocessor = cls.preprocessor_cls.from_preset(
            spec["preprocessor_preset"], **spec.get("preprocessor", {}))
        model = cls(backbone, preprocessor=preprocessor,
                    **spec.get("kwargs", {}))
    else:
        model = cls(**step["config"])
    model.save_to_preset(step["preset"])
    return run(step)


def pack(prefix, value, arrays):
    """A nested dict/tuple of arrays -> flat npz keys (`x/token_ids`,
    `y#0`, ...); `unpack` inverts it."""
    if isinstance(value, dict):
        for key, item in value.items():
            pack(f"{prefix}/{key}", item, arrays)
    elif isinstance(value, (tuple, list)):
        for index, item in enumerate(value):
            pack(f"{prefix}#{index}", item, arrays)
    else:
        arrays[prefix] = np.asarray(value)
    return arrays


def unpack(prefix, arrays):
    """The structure `pack` stored under `prefix` (None if nothing)."""
    if prefix in arrays:
        return arrays[prefix]
    children = {}  # the next part of each key's path -> its separator
    for key in arrays:
        separator, rest = key[len(prefix):len(prefix) + 1], \
            key[len(prefix) + 1:]
        if key.startswith(prefix) and separator in ("/", "#"):
            children[re.split("[/#]", rest)[0]] = separator
    if not children:
        return None
    if "/" in children.values():
        return {name: unpack(f"{prefix}/{name}", arrays)
                for name in children}
    return tuple(unpack(f"{prefix}#{index}", arrays)
                 for index in range(len(children)))


def train(step):
    """Run a saved task forward on preprocessed arrays, then fit it with
    SGD on them; save its outputs, losses and weights. Plain SGD, not Adam: Adam divides by the gradient's own
    size, so a weight whose true gradient is zero (a key bias) moves by
    the sign of round-off noise, which differs between backends."""
    import keras

    import kzoo  # noqa: F401  (registers the classes load_model finds)
    from kzoo.utils.skip_init import initial_values_skipped
    with initial_values_skipped():  # the file holds every weight
        model = keras.models.load_model(step["model"])
    model.preprocessor = None  # the arrays are preprocessed already
    with np.load(step["data"]) as data:
        arrays = {k: data[k] for k in data.files}
    x, y, weights = (unpack(name, arrays)
                     for name in ("x", "y", "sample_weight"))
    # The forward pass first (inference mode, compiled as `predict` runs
    # it: on jax one compile instead of one per eager op), then the step.
    out = {f"out/{k}": v for k, v in
           _flatten(model.predict_on_batch(x)).items()}
    model.compile(optimizer=keras.optimizers.SGD(step["learning_rate"]))
    batch = len(next(iter(x.values())))
    history = model.fit(x, y, sample_weight=weights, batch_size=batch,
                        epochs=step["epochs"], shuffle=False, verbose=0)
    out["loss"] = np.asarray(history.history["loss"])
    for weight in model.weights:
        out[f"weight/{weight.path}"] = keras.ops.convert_to_numpy(weight)
    np.savez(step["output"], **out)
    return out


def convert(step):
    import kzoo
    kzoo.convert.hf_to_preset(step["source"], step["preset"], verbose=False)


def start(backend, job_file):
    """This file running `job_file` on `backend`, in a warm interpreter
    (tests/warm_python.py) that imports the kzoo the test imported."""
    import warm_python
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = warm_python.environment(backend, path=[root])
    return warm_python.start([os.path.abspath(__file__), str(job_file)],
                             env)


def finish(workers, timeout):
    """Wait for each started worker ({backend: worker}); fail with its
    output if it failed."""
    for backend, worker in workers.items():
        stdout, stderr = worker.communicate(timeout=timeout)
        assert worker.returncode == 0, \
            f"{backend} worker failed:\n{stdout}{stderr}"


def main(job_file):
    import keras
    with open(job_file) as f:
        job = json.load(f)
    keras.utils.set_random_seed(job.get("seed", 0))
    for step in job["steps"]:
        {"run": run, "make": make, "train": train,
         "convert": convert}[step["op"]](step)
    print(f"done on {keras.backend.backend()}")


if __name__ == "__main__":
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    main(sys.argv[1])
