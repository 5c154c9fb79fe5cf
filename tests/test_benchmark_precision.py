"""scripts/benchmark_precision.py: its rows run tiny (in this process, on
the current backend), and its divergence verdict reads the curves
right."""

import math
from pathlib import Path

import keras
import pytest

from script_loading import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / \
    "benchmark_precision.py"
TINY = ["--layers", "1", "--hidden", "32", "--heads", "2",
        "--intermediate", "64", "--vocab", "2000", "--batch", "2",
        "--seq", "16", "--steps", "1", "--warmup", "1",
        "--curve-steps", "4", "--curve-every", "2", "--curve-batch", "4",
        "--curve-seq", "16", "--curve-random", "--curve-lr", "1e-3"]


@pytest.fixture(scope="module")
def benchmark():
    return load_script(SCRIPT)


@pytest.mark.parametrize("policy", ["float32", "mixed_bfloat16"])
def test_speed_rows_run(benchmark, policy, capsys):
    args = benchmark.parse_args(TINY)
    result = benchmark.measure_speed(policy, args)
    assert result["forward_s"] > 0 and result["train_s"] > 0
    # ... and the table prints them (it once called benchmark.py's
    # tokens_per_s with an outdated signature).
    backend = keras.backend.backend()
    benchmark.print_speed(args, [{**result, "backend": backend,
                                  "job": policy}])
    assert policy in capsys.readouterr().out
    # The global policy is restored for whatever runs next.
    assert keras.config.dtype_policy().name == "float32"


def test_loss_curves_run(benchmark):
    result = benchmark.loss_curves(benchmark.parse_args(TINY))
    assert len(result["float32"]) == len(result["mixed_bfloat16"]) == 4
    assert result["dtypes"]["mixed_bfloat16"] == {
        "variables": ["float32"], "compute": "bfloat16"}
    assert result["dtypes"]["float32"]["compute"] == "float32"
    # From the same weights on the same batches: the first losses differ
    # by bfloat16's rounding only.
    assert result["gaps"][0] < 0.05
    assert not result["diverged"]


@pytest.mark.once
def test_divergence_verdict(benchmark):
    fp32 = [1.0, 0.8, 0.6, 0.5]
    close = benchmark.curve_gaps(fp32, [1.0, 0.81, 0.6, 0.51], 2, 0.1)
    assert not close["diverged"]
    assert close["max_gap"] == pytest.approx(0.02)
    assert close["final_gap"] == pytest.approx(0.005 / 0.55)
    assert benchmark.curve_gaps(fp32, [1.0, 0.9, 0.9, 0.9], 2,
                                0.1)["diverged"]
    nan = benchmark.curve_gaps(fp32, [1.0, math.nan, 0.6, 0.5], 2, 0.1)
    assert nan["diverged"] and nan["max_gap"] == math.inf
    # A bfloat16 curve that falls faster is no divergence.
    assert not benchmark.curve_gaps(fp32, [1.0, 0.5, 0.3, 0.2], 2,
                                    0.1)["diverged"]


@pytest.mark.once
def test_cpu_flags_and_bad_arguments(benchmark, tmp_path):
    cpuinfo = tmp_path / "cpuinfo"
    cpuinfo.write_text("processor : 0\nflags : fpu avx512f avx512_bf16\n")
    assert benchmark.cpu_bf16_flags(cpuinfo) == {
        "avx512_bf16": True, "amx_bf16": False, "amx_tile": False}
    assert benchmark.cpu_bf16_flags(tmp_path / "absent") is None
    for bad in (["--vocab", "1000"], ["--layers", "0"],
                ["--curve-steps", "-1"]):
        with pytest.raises(SystemExit):
            benchmark.parse_args(bad)
