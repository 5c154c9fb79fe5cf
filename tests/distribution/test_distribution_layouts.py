"""Layout maps, the strategy helper and the launcher's plans: the parts of
kzoo.distribution that need no devices (every backend's pass runs them)."""

import json

import keras
import pytest

import kzoo
from kzoo import distribution as kd
from kzoo.distribution.launch import Plan, build_parser
from kzoo.distribution.layouts import expected_axes, unmatched_rules
from kzoo.distribution.tf_strategy import tpu_address

from text_testing import registered_backbones, tiny_backbone


def mesh(shape=(2, 4), names=("batch", "model")):
    count = shape[0] * shape[1]
    return keras.distribution.DeviceMesh(
        shape=shape, axis_names=names,
        devices=[f"cpu:{i}" for i in range(count)])


def tiny(backbone_cls):
    config = dict(vocabulary_size=64, num_layers=2, num_heads=4,
                  hidden_dim=16, intermediate_dim=32, max_sequence_length=8)
    return backbone_cls(**config)


EXPECTED = {
    # Megatron-style: column-split in-projections, row-split out-projections.
    "token_embedding/embeddings": (None, "model"),
    "transformer_layer_1/attention/query/kernel": (None, "model"),
    "transformer_layer_1/attention/key/bias": ("model",),
    "transformer_layer_0/attention/value/kernel": (None, "model"),
    "transformer_layer_0/attention/output/kernel": ("model", None),
    "transformer_layer_0/attention/output/bias": (None,),
    "transformer_layer_0/intermediate_dense/kernel": (None, "model"),
    "transformer_layer_0/intermediate_dense/bias": ("model",),
    "transformer_layer_0/output_dense/kernel": ("model", None),
    "transformer_layer_0/output_dense/bias": (None,),
    "transformer_layer_0/attention_layer_norm/gamma": (None,),
    "position_embedding/embeddings": (None, None),
}


@pytest.mark.parametrize("backbone_cls", registered_backbones())
def test_every_family_has_a_megatron_layout(backbone_cls):
    backbone = tiny_backbone(backbone_cls)
    layout_map = backbone_cls.get_layout_map(mesh())
    paths = {w.path: len(w.shape) for w in backbone.weights}
    # The shared layers' weights, wherever a family uses them.
    for path, axes in EXPECTED.items():
        if path in paths:
            assert expected_axes(layout_map, path, paths[path]) == axes, path
    # Every kernel of every block is split over the model axis.
    for path, rank in paths.items():
        if path.startswith("transformer_layer_") and \
                path.endswith("/kernel"):
            assert "model" in expected_axes(layout_map, path, rank), path
    # No rule is dead (a renamed layer would silently stop sharding), and
    # each split dimension divides by the model axis.
    assert unmatched_rules(layout_map, backbone.weights) == []
    for weight in backbone.weights:
        axes = expected_axes(layout_map, weight.path, len(weight.shape))
        for size, axis in zip(weight.shape, axes):
            if axis == "model":
                assert size % 4 == 0, weight.path


def test_layout_map_inside_a_task_and_with_other_axis_names():
    task = kzoo.BertMaskedLM(tiny(kzoo.BertBackbone))
    layout_map = kzoo.BertBackbone.get_layout_map(
        mesh(names=("data", "tensor")), model_parallel_dim_name="tensor",
        data_parallel_dim_name="data")
    axes = {w.path: expected_axes(layout_map, w.path, len(w.shape))
            for w in task.weights}
    assert axes["transformer_layer_0/attention/query/kernel"] == (
        None, "tensor")
    # Task heads stay replicated.
    assert axes["mlm_head/transform/kernel"] == (None, None)


def test_layout_map_names_a_missing_axis():
    with pytest.raises(ValueError, match="not an axis of the device mesh"):
        kzoo.BertBackbone.get_layout_map(mesh(), model_parallel_dim_name="mp")


def test_a_family_without_rules_says_what_to_add():
    class NewBackbone(kzoo.Backbone):
        pass
    with pytest.raises(NotImplementedError, match="layout_rules"):
        NewBackbone.get_layout_map(mesh())


def test_unknown_role():
    with pytest.raises(ValueError, match="Unknown layout role"):
        kd.layout_map_from_rules({".*kernel": "diagonal"}, mesh())


def test_model_parallel_distribution_from_a_family():
    if keras.backend.backend() != "jax":
        pytest.skip("keras.distribution.ModelParallel needs jax devices")
    devices = keras.distribution.list_devices()
    dist = kd.model_parallel(kzoo.BertBackbone, (1, len(devices)))
    assert dist.batch_dim_name == "batch"


def test_tpu_is_looked_for_only_where_it_announces_itself(monkeypatch):
    for name in ("TPU_NAME", "COLAB_TPU_ADDR"):
        monkeypatch.delenv(name, raising=False)
    assert tpu_address() is None  # this machine has no TPU
    assert tpu_address("grpc://10.0.0.2:8470") == "grpc://10.0.0.2:8470"
    monkeypatch.setenv("COLAB_TPU_ADDR", "10.0.0.3:8470")
    assert tpu_address() == "grpc://10.0.0.3:8470"
    monkeypatch.setenv("TPU_NAME", "my-tpu")
    assert tpu_address() == "my-tpu"


def test_strategy_is_the_default_one_here():
    import tensorflow as tf
    assert kd.strategy() is tf.distribute.get_strategy()


def test_launched_processes_reads_each_backends_variables(monkeypatch):
    for name in ("KERAS_DISTRIBUTION_NUM_PROCESSES", "TF_CONFIG",
                 "WORLD_SIZE"):
        monkeypatch.delenv(name, raising=False)
    assert kd.launched_processes() == (0, 1)
    monkeypatch.setenv("WORLD_SIZE", "4")
    monkeypatch.setenv("RANK", "3")
    assert kd.launched_processes() == (3, 4)
    monkeypatch.setenv("TF_CONFIG", json.dumps({
        "cluster": {"worker": ["a:1", "b:1"]},
        "task": {"type": "worker", "index": 1}}))
    assert kd.launched_processes() == (1, 2)
    monkeypatch.setenv("KERAS_DISTRIBUTION_NUM_PROCESSES", "2")
    monkeypatch.setenv("KERAS_DISTRIBUTION_PROCESS_ID", "0")
    assert kd.launched_processes() == (0, 2)


# ----------------------------------------------------------------------
# The launcher's plans (what each process would be started with)
# ----------------------------------------------------------------------
def test_local_jax_plan():
    plan = Plan("jax", ["train.py", "--epochs", "1"], processes=2,
                cpu_devices=4)
    runs = plan.commands()
    assert len(runs) == 2
    for index, (argv, env) in enumerate(runs):
        assert argv[1:] == ["train.py", "--epochs", "1"]
        assert env["KERAS_DISTRIBUTION_PROCESS_ID"] == str(index)
        assert env["KERAS_DISTRIBUTION_NUM_PROCESSES"] == "2"
        assert env["KERAS_DISTRIBUTION_JOB_ADDRESSES"].startswith(
            "127.0.0.1:")
        assert "device_count=4" in env["XLA_FLAGS"]


def test_cpu_devices_keep_the_users_other_xla_flags(monkeypatch):
    monkeypatch.setenv("XLA_FLAGS", "--xla_backend_optimization_level=0 "
                       "--xla_force_host_platform_device_count=8")
    plan = Plan("jax", ["train.py"], processes=2, cpu_devices=4)
    for _, env in plan.commands():
        assert env["XLA_FLAGS"] == ("--xla_backend_optimization_level=0 "
                                    "--xla_force_host_platform_device_count=4")


def test_multi_host_tensorflow_plan():
    plan = Plan("tensorflow", ["train.py"], processes=2,
                hosts=["10.0.0.1", "10.0.0.2"], host_index=1, port=2222)
    configs = [json.loads(env["TF_CONFIG"]) for _, env in plan.commands()]
    assert configs[0]["cluster"]["worker"] == [
        "10.0.0.1:2222", "10.0.0.1:2223", "10.0.0.2:2222", "10.0.0.2:2223"]
    assert [c["task"]["index"] for c in configs] == [2, 3]


def test_torch_plan_is_one_torchrun_per_host():
    plan = Plan("torch", ["train.py"], processes=8,
                hosts=["10.0.0.1", "10.0.0.2"], host_index=1, port=29500)
    (argv, env), = plan.commands()
    assert argv[1:3] == ["-m", "torch.distributed.run"]
    assert "--nnodes=2" in argv and "--node-rank=1" in argv
    assert "--nproc-per-node=8" in argv
    assert "--master-addr=10.0.0.1" in argv
    assert argv[-1] == "train.py"
    assert "GLOO_SOCKET_IFNAME" not in env  # only pinned to lo locally


def test_launcher_arguments_and_dry_run(capsys):
    from kzoo.distribution.launch import main
    args = build_parser().parse_args(
        ["--backend", "torch", "--processes", "2", "train.py", "--lr", "1"])
    assert args.script_args == ["--lr", "1"]
    assert main(["--backend", "jax", "--processes", "2", "--dry-run",
                 "train.py"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert len(lines) == 2 and "KERAS_DISTRIBUTION_PROCESS_ID=1" in lines[1]
    with pytest.raises(ValueError, match="host-index"):
        Plan("jax", ["t.py"], hosts=["a"], host_index=1)


def test_launcher_stops_everything_on_timeout(tmp_path):
    from kzoo.distribution.launch import run
    script = tmp_path / "sleep.py"
    script.write_text("import time\ntime.sleep(60)\n")
    plan = Plan("jax", [str(script)], processes=2)
    assert run(plan, timeout=1) == 124


def test_launcher_stops_the_others_when_one_fails(tmp_path):
    from kzoo.distribution.launch import run
    script = tmp_path / "fail_one.py"
    script.write_text(
        "import os, sys, time\n"
        "if os.environ['KERAS_DISTRIBUTION_PROCESS_ID'] == '1':\n"
        "    sys.exit(3)\n"
        "time.sleep(60)\n")
    plan = Plan("jax", [str(script)], processes=2)
    assert run(plan, timeout=50) == 3
