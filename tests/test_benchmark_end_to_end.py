"""scripts/benchmark_end_to_end.py: its rows run (a tiny random BERT, a
few passages, in this process) and its table's ratios come from the
rows' fit times."""

import math
from pathlib import Path

import pytest

from script_loading import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / \
    "benchmark_end_to_end.py"


@pytest.fixture(scope="module")
def benchmark():
    return load_script(SCRIPT)


def tiny_options(benchmark):
    return benchmark.default_options(
        preset="bert_tiny_en_uncased", load_weights=False, examples=12,
        words=8, sequence_length=16, batch_size=4, epochs=2)


def check_row(row, options):
    steps_per_epoch = math.ceil(options["examples"] / options["batch_size"])
    assert row["steps"] == steps_per_epoch * options["epochs"]
    assert len(row["epoch_s"]) == options["epochs"]
    # The fit's wall time holds the set-up and every epoch.
    assert row["fit_s"] >= row["setup_s"] + sum(row["epoch_s"]) - 1e-6
    assert row["compile_s"] == pytest.approx(row["epoch_s"][0] -
                                             row["epoch_s"][1])
    assert row["steps_per_s"] > 0
    assert 0.0 <= row["accuracy"] <= 1.0


def test_kzoo_row_runs(benchmark):
    options = tiny_options(benchmark)
    check_row(benchmark.worker("kzoo", options), options)


@pytest.mark.once
def test_transformers_row_runs(benchmark):
    # The exported random encoder loads into transformers and trains.
    options = dict(tiny_options(benchmark), threads=1)
    check_row(benchmark.worker("transformers", options), options)


def test_data_has_the_asked_size(benchmark):
    options = benchmark.default_options(examples=40, words=16)
    (train_x, train_y), (test_x, test_y), names = benchmark.load_data(options)
    assert len(train_x) == len(train_y) == 40 and len(names) == 3
    assert len(test_x) == len(test_y) > 0
    assert not set(train_x) & set(test_x)
    assert {len(text.split()) for text in train_x} == {16}
    with pytest.raises(ValueError, match="examples >= batch_size"):
        benchmark.default_options(examples=8, batch_size=32)


def test_table_ratios_come_from_the_rows(benchmark):
    options = benchmark.default_options(backends=["jax", "torch"])
    assert benchmark.default_rows(options["backends"]) == [
        ("kzoo", "jax"), ("kzoo", "torch"), ("transformers", "torch")]

    def row(library, backend, fit_s):
        return {"library": library, "backend": backend, "fit_s": fit_s,
                "setup_s": 1.0, "epoch_s": [fit_s / 2 + 1, fit_s / 2 - 2],
                "compile_s": 3.0, "steps_per_s": 2.0, "accuracy": 0.5}
    results = [row("kzoo", "jax", 40.0), row("kzoo", "torch", 80.0),
               row("transformers", "torch", 60.0),
               {"library": "kzoo", "backend": "tensorflow",
                "error": "boom"}]
    table = benchmark.format_table(results, options).splitlines()
    assert table[0].startswith("all_minilm_l6_v2 + linear head")

    def cells(library, backend):
        return next(line.split() for line in table
                    if line.split()[:2] == [library, backend])
    assert cells("kzoo", "jax")[-1] == "1.50x"
    assert cells("kzoo", "torch")[-1] == "0.75x"
    assert cells("transformers", "torch")[-1] == "1.00x"
    assert cells("kzoo", "jax")[2] == "40.0"
    assert cells("kzoo", "tensorflow")[2:] == ["failed:", "boom"]
    # No transformers row: no ratios, the rows still print.
    alone = benchmark.format_table(results[:1]).splitlines()
    assert alone[2].split()[-1] == "0.500"
