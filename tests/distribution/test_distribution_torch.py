"""PyTorch: DistributedDataParallel over two processes started by torchrun
(through scripts/launch.py), gloo on 127.0.0.1.

Runs in the torch pass of the suite (KERAS_BACKEND=torch).
"""

import keras
import pytest

from distribution_support import max_diff, two_processes_vs_one

pytestmark = pytest.mark.skipif(
    keras.backend.backend() != "torch",
    reason="runs in the torch pass of the suite (KERAS_BACKEND=torch)")

TOLERANCE = 1e-5


@pytest.mark.parametrize("batch_size, world_size", [(8, 2), (7, 2), (5, 4),
                                                    (1, 2), (3, 3)])
def test_shares_cover_the_batch_and_weights_average_to_the_mean(
        batch_size, world_size):
    from kzoo.distribution.torch_ddp import share_bounds
    shares = [share_bounds(batch_size, r, world_size)
              for r in range(world_size)]
    covered = sorted(i for start, stop, weight in shares if weight
                     for i in range(start, stop))
    assert covered == list(range(batch_size))
    # DDP averages gradients: sum(weight) / world_size must be 1.
    assert sum(w for _, _, w in shares) == pytest.approx(world_size)
    for start, stop, _ in shares:
        assert stop > start  # every rank runs forward/backward


def test_wrap_needs_a_process_group():
    from kzoo.distribution.torch_ddp import wrap
    with pytest.raises(RuntimeError, match="torchrun"):
        wrap(keras.Sequential([keras.layers.Dense(1)]))


def test_ddp_two_processes_take_the_combined_batch_step(tmp_path):
    (single, single_loss, _), ranks = two_processes_vs_one("torch", tmp_path)
    for weights, loss, count in ranks:
        assert count == 2
        assert max_diff(weights, single) < TOLERANCE
        # The logged loss is the global batch's, as on the other backends.
        assert abs(loss - single_loss) < TOLERANCE
