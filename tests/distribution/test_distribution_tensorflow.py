"""TensorFlow: tf.distribute MirroredStrategy over two logical CPU devices,
presets inside strategy.scope(), and MultiWorkerMirroredStrategy over two
processes on 127.0.0.1.

Runs in the tensorflow pass of the suite (KERAS_BACKEND=tensorflow). Each
check starts its own Python process: logical devices and the multi-worker
strategy must be configured before TensorFlow initialises.
"""

import json

import keras
import pytest

from distribution_support import (check_layerwise, max_diff, run,
                                  two_processes_vs_one, worker_env)

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "tensorflow",
    reason="runs in the tensorflow pass of the suite "
           "(KERAS_BACKEND=tensorflow)")

TOLERANCE = 1e-5


@pytest.fixture(scope="module")
def mirrored_report(tmp_path_factory):
    out = tmp_path_factory.mktemp("tf_mirrored") / "report.json"
    run(["tf_mirrored.py", out], worker_env("tensorflow"), timeout=300)
    return json.loads(out.read_text())


def test_strategy_helper(mirrored_report):
    assert mirrored_report["strategy"] == "MirroredStrategy"
    assert mirrored_report["replicas"] == 2
    assert mirrored_report["cached"]
    # No TPU, no GPUs, no TF_CONFIG here: the default strategy.
    assert mirrored_report["default_strategy"] == \
        "_DefaultDistributionStrategy"


def test_mirrored_fit_on_raw_strings_matches_single_device(mirrored_report):
    report = mirrored_report
    assert report["moved"] > 4 * TOLERANCE  # AdamW at 5e-5 moved them
    assert report["loss_diff"] < TOLERANCE
    assert report["weights_diff"] < min(TOLERANCE, report["moved"] / 100)
    assert report["predict_diff"] < TOLERANCE


def test_preset_loads_trains_and_saves_inside_the_scope(mirrored_report):
    preset = mirrored_report["preset"]
    assert preset["variable_type"] == "MirroredVariable"
    assert preset["loaded_diff"] == 0.0
    assert preset["round_trip_diff"] == 0.0
    assert preset["tuned_backbone_diff"] == 0.0



def test_layerwise_rates_and_unfreezing_match_single_device(mirrored_report):
    check_layerwise(mirrored_report["layerwise"], TOLERANCE)


def test_two_workers_take_the_combined_batch_step(tmp_path):
    (single, single_loss, _), workers = two_processes_vs_one(
        "tensorflow", tmp_path)
    for weights, loss, count in workers:
        assert count == 2
        assert max_diff(weights, single) < TOLERANCE
        assert abs(loss - single_loss) < TOLERANCE
