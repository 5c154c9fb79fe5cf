"""JAX on 8 virtual CPU devices: one `fit` step on a single device, under
`DataParallel` and under `ModelParallel` (2 x 4 mesh), compared.

Run with XLA_FLAGS=--xla_force_host_platform_device_count=8 and
KERAS_BACKEND=jax (set before jax is imported); writes a JSON report to
argv[1]. With `--time`, also times a step (the sanity figure of the guide).
"""

import contextlib
import sys

import jax
import keras
import numpy as np

from common import (BATCH, backbone_class, batch, build_task,
                    layerwise_fit, layerwise_report, max_diff, task_kinds,
                    time_steps, write_json)
from kzoo import distribution as kd
from kzoo.distribution.layouts import expected_axes, unmatched_rules

MODEL_AXIS_SIZE = 4
# One block is enough here (the layout tests cover the layer index); it
# halves XLA's compile time on 8 devices.
CONFIG = {"num_layers": 1}


def one_step(kind, dist, timed=False):
    """Build under `dist`, take one fit step, predict; optionally time a
    second step afterwards."""
    x, y = batch(kind)
    with dist.scope() if dist is not None else contextlib.nullcontext():
        task = build_task(kind, config=CONFIG)
        initial = task.get_weights()
        history = task.fit(x, y, batch_size=BATCH, epochs=1, shuffle=False,
                           verbose=0)
        weights = task.get_weights()
        predictions = np.asarray(task.predict(x, batch_size=BATCH, verbose=0))
        step_s = time_steps(task, x, y) if timed else None
    return {"task": task, "loss": history.history["loss"][0],
            "initial": initial, "weights": weights,
            "predictions": predictions, "step_s": step_s}


def sharding_errors(task, layout_map):
    """Where a variable's actual JAX sharding is not what the map says, and
    how many variables are split over the model axis."""
    errors, sharded = [], 0
    for variable in task.weights:
        want = expected_axes(layout_map, variable.path, len(variable.shape))
        spec = tuple(variable.value.sharding.spec)
        spec = spec + (None,) * (len(variable.shape) - len(spec))
        if spec != want:
            errors.append(f"{variable.path}: {spec} != {want}")
        if "model" in want:
            sharded += 1
            axis = want.index("model")
            local = variable.value.addressable_shards[0].data.shape
            if local[axis] * MODEL_AXIS_SIZE != variable.shape[axis]:
                errors.append(f"{variable.path}: local shard {local}")
    # Optimizer slots take their variable's layout.
    for slot in task.optimizer.variables:
        if slot.path.endswith("query_kernel_momentum"):
            spec = tuple(slot.value.sharding.spec)
            if spec != (None, "model"):
                errors.append(f"{slot.path}: {spec}")
    return errors, sharded


def main(out, timed):
    assert jax.device_count() == 8, jax.devices()
    report = {"devices": jax.device_count()}
    # The classifier head adds nothing to shard; it is covered by the
    # TensorFlow and multi-process tests.
    for kind in [k for k in task_kinds() if k != "classifier"]:
        ref = one_step(kind, None, timed)
        entry = {"single_loss": ref["loss"], "single_step_s": ref["step_s"],
                 "moved": max_diff(ref["weights"], ref["initial"])}
        model_parallel = kd.model_parallel(backbone_class(kind),
                                           (2, MODEL_AXIS_SIZE))
        for name, dist in (("data_parallel", keras.distribution.DataParallel()),
                           ("model_parallel", model_parallel)):
            run = one_step(kind, dist, timed)
            entry[name] = {
                "loss_diff": abs(run["loss"] - ref["loss"]),
                "weights_diff": max_diff(run["weights"], ref["weights"]),
                "predict_diff": float(np.max(np.abs(
                    run["predictions"] - ref["predictions"]))),
                "step_s": run["step_s"],
            }
            if name == "model_parallel":
                layout_map = model_parallel._layout_map
                errors, sharded = sharding_errors(run["task"], layout_map)
                entry[name].update(
                    sharding_errors=errors, sharded_variables=sharded,
                    unmatched_rules=unmatched_rules(layout_map,
                                                    run["task"].weights))
        if kind == "causal_lm":
            entry["generate"] = generation_report(ref["task"])
        report[kind] = entry
    report["layerwise"] = layerwise_under(keras.distribution.DataParallel())
    write_json(out, report)


def layerwise_under(dist):
    """Discriminative rates and gradual unfreezing on the classifier under
    `dist`, against a single device."""
    x, y = batch("classifier")
    single = layerwise_fit(build_task("classifier", config=CONFIG), x, y)
    with dist.scope():
        task = build_task("classifier", config=CONFIG)
    return layerwise_report(single, layerwise_fit(task, x, y, dist.scope()))


def generation_report(single_task):
    """Greedy generation under DataParallel, against the single-device
    model."""
    prompts = [[5, 6, 7], [8, 9], [10, 11, 12, 13], [14]] * 2
    settings = {"greedy": {}}
    expected = {name: single_task.generate(prompts, max_length=12, **kwargs)
                for name, kwargs in settings.items()}
    with keras.distribution.DataParallel().scope():
        task = build_task("causal_lm", config=CONFIG)
        task.set_weights(single_task.get_weights())
        got = {name: task.generate(prompts, max_length=12, **kwargs)
               for name, kwargs in settings.items()}
    return {name: got[name] == expected[name] for name in settings}


if __name__ == "__main__":
    main(sys.argv[1], "--time" in sys.argv)
