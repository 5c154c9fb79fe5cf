"""JAX: keras.distribution DataParallel / ModelParallel on 8 virtual CPU
devices, and two-process data parallelism on 127.0.0.1.

Runs in the jax pass of the suite (KERAS_BACKEND=jax). Each check starts
its own Python process: XLA_FLAGS must be set before jax is imported, and
jax.distributed can be initialised only once per process.
"""

import json

import keras
import pytest

from distribution_support import (check_layerwise, max_diff, run,
                                  two_processes_vs_one, worker_env)

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "jax",
    reason="runs in the jax pass of the suite (KERAS_BACKEND=jax)")

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def mesh_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("jax_mesh") / "report.json"
    env = worker_env("jax", cpu_devices=8)
    run(["jax_mesh.py", out], env, timeout=300)
    return json.loads(out.read_text())


def kinds(report):
    return [k for k in report if k not in ("devices", "layerwise")]


def test_eight_virtual_devices(mesh_report):
    assert mesh_report["devices"] == 8
    # BERT always; GPT-2 once its family exists.
    assert "masked_lm" in kinds(mesh_report)


@pytest.mark.parametrize("mode", ["data_parallel", "model_parallel"])
def test_one_fit_step_matches_single_device(mesh_report, mode):
    for kind in kinds(mesh_report):
        entry = mesh_report[kind]
        # The step really moved the weights (AdamW, learning rate 5e-5)...
        assert entry["moved"] > 4 * TOLERANCE, kind
        # ...and moved them the same way on 8 devices.
        result = entry[mode]
        assert result["loss_diff"] < TOLERANCE, (kind, result)
        assert result["weights_diff"] < min(TOLERANCE, entry["moved"] / 100)
        assert result["predict_diff"] < TOLERANCE, (kind, result)


def test_variables_sharded_as_the_layout_map_says(mesh_report):
    for kind in kinds(mesh_report):
        result = mesh_report[kind]["model_parallel"]
        assert result["sharding_errors"] == [], kind
        assert result["unmatched_rules"] == [], kind
        # q/k/v kernels and biases, attention out, FFN in (kernel, bias)
        # and out: 10 in the one block, plus the token embedding.
        assert result["sharded_variables"] == 11, kind


def test_generation_under_data_parallel(mesh_report):
    assert mesh_report["causal_lm"]["generate"] == {"greedy": True}



def test_layerwise_rates_and_unfreezing_match_single_device(mesh_report):
    check_layerwise(mesh_report["layerwise"], TOLERANCE)


def test_two_processes_take_the_combined_batch_step(tmp_path):
    (single, single_loss, _), processes = two_processes_vs_one(
        "jax", tmp_path)
    for weights, loss, count in processes:
        assert count == 2
        assert max_diff(weights, single) < TOLERANCE
        assert abs(loss - single_loss) < TOLERANCE
