"""guides/distributed_training.py runs, in its smoke mode, on the backend
of this pass of the suite (JAX: data and model parallel on 8 virtual
devices; TensorFlow: MirroredStrategy on logical CPUs and a preset in the
scope; PyTorch: DDP over two torchrun processes)."""

import keras

from distribution_support import REPO, run, worker_env

GUIDE = REPO / "guides" / "distributed_training.py"


def test_guide_smoke_run():
    backend = keras.backend.backend()
    env = worker_env(backend)
    # As a user runs it: the guide sets up its own virtual devices.
    env.pop("XLA_FLAGS")
    output = run([GUIDE, "--smoke"], env, timeout=300)
    assert f"=== {backend} ===" in output
    assert output.rstrip().endswith("done"), output[-2000:]
    assert "scripts/launch.py --backend" in output  # the multi-host recipe
    if backend == "jax":
        assert "P(None, 'model')" in output and "P('model', None)" in output
    elif backend == "tensorflow":
        assert "MirroredStrategy with 2 replicas" in output
        assert "MirroredVariable" in output
    else:
        assert "process 0 of 2" in output and "process 1 of 2" in output
