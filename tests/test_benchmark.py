"""scripts/benchmark.py: its measurements run (tiny BERT, in this process,
on the backend under test), its FLOP count is the model's, and its tables
are computed from the rows. keras-hub is no test dependency, so its rows
are left to the script."""

from pathlib import Path

import keras
import numpy as np
import pytest

from script_loading import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "benchmark.py"
TINY = ["--layers", "2", "--hidden", "32", "--heads", "4",
        "--intermediate", "64", "--vocab", "1200", "--batch", "2",
        "--seq", "8", "--steps", "1", "--warmup", "1"]


@pytest.fixture(scope="module")
def benchmark():
    return load_script(SCRIPT)


@pytest.fixture
def args(benchmark):
    return benchmark.parse_args(TINY)


def test_flops_per_token_counts_the_models_matmuls(benchmark, args):
    # Counted from the kzoo model's own kernels (not from the formula):
    # each kernel is one matmul of 2 x its size FLOPs per token it sees;
    # the pooler's sees one token per sequence.
    import kzoo
    backbone = kzoo.BertBackbone(**benchmark.backbone_config(args))
    layer_kernels = sum(int(np.prod(w.shape)) for w in backbone.weights
                        if w.path.startswith("transformer_layer_")
                        and len(w.shape) == 2)
    pooler = sum(int(np.prod(w.shape)) for w in backbone.weights
                 if w.path.startswith("pooler") and len(w.shape) == 2)
    attention = 4 * args.seq * args.hidden * args.layers  # qk^T, probs v
    expected = 2 * layer_kernels + attention + 2 * pooler / args.seq
    assert benchmark.flops_per_token(args) == pytest.approx(expected)
    assert benchmark.flops_per_token(args, train=True) == \
        pytest.approx(3 * expected)
    # BERT-base at 128 tokens: ~170 MFLOPs per token forward.
    base = benchmark.parse_args([])
    assert benchmark.flops_per_token(base) == pytest.approx(
        12 * (2 * (4 * 768 ** 2 + 2 * 768 * 3072) + 4 * 128 * 768)
        + 2 * 768 ** 2 / 128)


def test_matmul_ceiling_is_the_mix_of_the_shapes(benchmark, args):
    backend = keras.backend.backend()
    ceiling = benchmark.measure_matmul(backend, args)
    shapes = ceiling["shapes"]
    assert [s["name"] for s in shapes] == \
        [s[0] for s in benchmark.matmul_shapes(args)]
    for s, shape in zip(shapes, benchmark.matmul_shapes(args)):
        assert s["gflops"] == pytest.approx(
            benchmark.matmul_flops(shape) / s["seconds"] / 1e9)
    flops = sum(benchmark.matmul_flops(shape) * shape[-1]
                for shape in benchmark.matmul_shapes(args))
    seconds = sum(s["seconds"] * s["count"] for s in shapes)
    assert ceiling["ceiling_gflops"] == pytest.approx(flops / seconds / 1e9)


def test_kzoo_speed_row_runs(benchmark, args):
    row = benchmark.measure_keras("kzoo", args)
    # Timed under Keras' AdamW (as keras-hub) and under kzoo's own.
    assert row["forward_s"] > 0 and row["train_s"] > 0 and \
        row["train_fused_s"] > 0
    # Peak RSS since the process started: never less after training.
    assert row["train_peak_rss_mib"] >= row["forward_peak_rss_mib"] >= \
        row["baseline_peak_rss_mib"] > 0


def test_kzoo_preset_saves_once_and_loads(benchmark, args, tmp_path):
    folder = benchmark.preset_folder(str(tmp_path), "kzoo")
    assert benchmark.save_preset("kzoo", folder, args) == {"saved": True}
    # Same shape: reused; another shape: written again.
    assert benchmark.save_preset("kzoo", folder, args) == {"saved": False}
    loaded = benchmark.load_preset("kzoo", folder)
    assert loaded["load_s"] > 0
    assert loaded["params"] == benchmark.build_keras_backbone(
        "kzoo", args).count_params()
    wider = benchmark.parse_args(TINY + ["--intermediate", "96"])
    assert benchmark.save_preset("kzoo", folder, wider) == {"saved": True}
    assert benchmark.load_preset("kzoo", folder)["params"] > \
        loaded["params"]


@pytest.mark.once
def test_transformers_rows_run(benchmark, args, tmp_path):
    row = benchmark.measure_transformers(args)
    assert row["forward_s"] > 0 and row["train_s"] > 0
    folder = benchmark.preset_folder(str(tmp_path), "transformers")
    benchmark.save_preset("transformers", folder, args)
    assert benchmark.load_preset("transformers", folder)["params"] == \
        row["params"]


def cells(table, first):
    """The cells of the markdown row whose first cells are `first`."""
    for line in table.splitlines():
        row = [cell.strip() for cell in line.strip("|").split("|")]
        if row[:len(first)] == first:
            return row
    raise AssertionError(f"no row {first} in\n{table}")


@pytest.mark.once
def test_tables_are_computed_from_the_rows(benchmark, args):
    rows = [{"backend": "jax", "library": "kzoo", "forward_s": 0.01,
             "train_s": 0.04, "train_fused_s": 0.032},
            {"backend": "jax", "library": "keras-hub", "forward_s": 0.02,
             "train_s": 0.05},
            {"backend": "torch", "library": "transformers",
             "forward_s": 0.04, "train_s": 0.08}]
    speed = benchmark.format_speed(args, rows)
    assert cells(speed, ["jax", "kzoo"])[2:] == ["1,600", "400", "500"]
    assert cells(speed, ["jax", "keras-hub"])[2:] == ["800", "320", "-"]
    # The train ratio is like for like (both under Keras' AdamW); what
    # kzoo's fused AdamW adds is its own row.
    assert cells(speed, ["jax: kzoo / keras-hub"])[1:] == ["2.00", "1.25"]
    assert cells(speed, ["jax: kzoo / transformers"])[1:] == ["4.00", "2.00"]
    fused = speed[speed.index("kzoo's fused AdamW"):]
    assert cells(fused, ["jax"])[1:] == ["1.25"]

    ceilings = {"jax": {"shapes": [{"name": "q/k/v/output",
                                    "gflops": 50.0}],
                        "ceiling_gflops": 40.0},
                "torch": {"shapes": [{"name": "q/k/v/output",
                                      "gflops": 20.0}],
                          "ceiling_gflops": 10.0}}
    table = benchmark.format_ceiling(args, ceilings, rows)
    assert cells(table, ["jax"])[1:] == ["50.0", "40.0"]
    per_token = benchmark.flops_per_token(args)
    gflops = per_token * 16 / 0.01 / 1e9
    assert cells(table, ["jax", "kzoo"])[2:4] == \
        [f"{gflops:,.1f}", f"{gflops / 40:.0%}"]
    train = 3 * per_token * 16 / 0.08 / 1e9     # against torch's ceiling
    assert cells(table, ["torch (HF)", "transformers"])[4:] == \
        [f"{train:,.1f}", f"{train / 10:.0%}"]

    loads = [{"backend": "jax", "library": "kzoo", "load_s": 1.5,
              "import_s": 4.0},
             {"backend": "jax", "library": "keras-hub", "load_s": 6.0,
              "import_s": 5.0}]
    table = benchmark.format_load(args, loads)
    assert cells(table, ["jax", "kzoo"])[2:] == ["1.50", "4.00", "yes"]
    assert cells(table, ["jax", "keras-hub"])[-1] == "no"
    assert cells(table, ["jax: kzoo / keras-hub"])[1:] == ["4.00"]

    points = [{**row, "seq": seq, "batch": 2,
               "baseline_peak_rss_mib": 500.0,
               "forward_peak_rss_mib": 900.0 * seq,
               "train_peak_rss_mib": 1000.0 * seq}
              for seq in (8, 16) for row in rows]
    points[3]["forward_s"] = 0.005        # kzoo, seq 16: twice as fast
    sweep = benchmark.format_sweep(args, points)
    assert cells(sweep, ["8", "2", "jax", "kzoo"])[4:] == \
        ["1,600", "400", "500", "7,200", "8,000", "2.00", "1.25", "4.00",
         "2.00"]
    assert cells(sweep, ["16", "2", "jax", "kzoo"])[4:] == \
        ["6,400", "800", "500", "14,400", "16,000", "4.00", "1.25", "8.00",
         "2.00"]
    assert cells(sweep, ["16", "2", "torch (HF)", "transformers"])[4] == \
        "800"


@pytest.mark.once
def test_bad_options_are_refused(benchmark, capsys):
    for argv, message in [(["--hidden", "30", "--heads", "4"],
                           "must be a multiple of --heads"),
                          (["--sweep-seqs", "128,1024"], "at most 512"),
                          (["--steps", "0"], "--steps must be >= 1")]:
        with pytest.raises(SystemExit):
            benchmark.parse_args(argv)
        assert message in capsys.readouterr().err
    with pytest.raises(SystemExit, match="Unknown section 'sweeep'"):
        benchmark.sections_of(benchmark.parse_args(["--sections", "sweeep"]))
    assert benchmark.sections_of(benchmark.parse_args(["--sweep"])) == \
        ["speed", "ceiling", "load", "sweep"]


@pytest.mark.once
def test_driver_runs_every_section(benchmark, capsys, tmp_path):
    # The subprocesses and the driver's plumbing, on the cheapest library
    # (transformers: no Keras in its workers), one sweep point.
    out = tmp_path / "results.json"
    benchmark.main(TINY + ["--libraries", "transformers", "--sweep",
                           "--sweep-seqs", "8", "--sweep-batches", "1",
                           "--torch-threads", "1", "--preset-dir",
                           str(tmp_path / "presets"), "--json", str(out)])
    text = capsys.readouterr().out
    for title in ("### Speed", "### Matmul ceiling", "### Loading",
                  "### Scaling sweep"):
        assert title in text
    import json
    results = json.loads(out.read_text())
    assert set(results["ceilings"]) == {"torch"}
    assert results["loads"][0]["library"] == "transformers"
    point = results["sweep"][0]
    assert (point["seq"], point["batch"]) == (8, 1)
    # The worker's own memory: neither Keras (~0.9 GB; the worker never
    # imports it) nor this test process (over 1 GB, which getrusage's
    # ru_maxrss carries over fork + exec on Linux) counts in it.
    assert point["baseline_peak_rss_mib"] < 700
    assert cells(text, ["8", "1", "torch (HF)", "transformers"])[4] == \
        f"{8 / point['forward_s']:,.0f}"


def test_peak_rss_never_goes_down(benchmark, monkeypatch):
    """VmHWM can read lower than before (the kernel updates its high-water
    mark lazily): the benchmark's peak is the largest reading so far."""
    import builtins
    import io
    readings = iter([4120.25, 4120.0, 4200.0])  # MiB, whole kB
    real_open = builtins.open

    def fake_open(path, *args, **kwargs):
        if path == "/proc/self/status":
            return io.StringIO(f"Name:\tpython\nVmHWM:\t"
                               f"{int(next(readings) * 1024)} kB\n")
        return real_open(path, *args, **kwargs)
    monkeypatch.setattr(benchmark, "_PEAK_RSS_MIB", 0.0)
    monkeypatch.setattr(builtins, "open", fake_open)
    peaks = [benchmark.peak_rss_mib() for _ in range(3)]
    assert peaks == [4120.25, 4120.25, 4200.0]
