"""scripts/benchmark_generation.py: its rows run (tiny models, in this
process) and its tables compare each row with the same model's rows.
keras-hub is no test dependency, so its rows are left to the script."""

from pathlib import Path

import pytest

from script_loading import load_script

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / \
    "benchmark_generation.py"


@pytest.fixture(scope="module")
def benchmark():
    return load_script(SCRIPT)


def tiny_options(benchmark):
    return benchmark.default_options(tiny=True, batch_size=2,
                                     prompt_length=5, new_tokens=3,
                                     repeats=1)


@pytest.mark.parametrize("implementation", ["kzoo", "kzoo_t5"])
def test_kzoo_rows_run(benchmark, implementation):
    # The worker checks its own output (every row has all its new tokens).
    row = benchmark.worker(implementation, tiny_options(benchmark))
    assert row["tokens_per_s"] == pytest.approx(2 * 3 / row["best_s"])
    assert len(row["times_s"]) == 1


@pytest.mark.once
def test_transformers_t5_row_runs(benchmark):
    # One torch thread, as conftest chooses on the torch backend: the
    # model is tiny, and idle threads only wait on each other.
    options = dict(tiny_options(benchmark), threads=1)
    row = benchmark.worker("transformers_t5", options)
    assert row["tokens_per_s"] > 0


@pytest.mark.once
def test_tables_compare_rows_of_the_same_model(benchmark):
    options = benchmark.default_options(backends=["jax", "torch"])
    rows = benchmark.default_rows(options["backends"],
                                  options["no_cache_backends"])
    assert ("kzoo_t5", "torch") in rows and ("transformers_t5", "torch") \
        in rows
    assert benchmark.default_rows(["jax"], [], models=["t5"]) == [
        ("kzoo_t5", "jax"), ("keras_hub_t5", "jax"),
        ("transformers_t5", "torch")]
    speeds = {("kzoo", "jax"): 100.0, ("keras_hub", "jax"): 50.0,
              ("kzoo_t5", "jax"): 300.0, ("keras_hub_t5", "jax"): 100.0,
              ("kzoo_t5", "torch"): 150.0}
    results = [{"implementation": i, "backend": b, "tokens_per_s": v,
                "first_call_s": 1.0} for (i, b), v in speeds.items()]
    table = benchmark.format_table(results, options).splitlines()
    t5_start = next(i for i, line in enumerate(table)
                    if line.startswith("T5 "))
    gpt2, t5 = table[:t5_start], table[t5_start:]
    assert gpt2[0].startswith("GPT-2 small")

    def row(lines, label, backend):
        return next(line.split() for line in lines
                    if line.startswith(label + " ")
                    and line.split()[len(label.split())] == backend)
    # kzoo T5 against keras-hub T5 (not keras-hub GPT-2), and against
    # kzoo T5 on jax.
    assert row(t5, "kzoo T5", "jax")[-2:] == ["3.00x", "1.00x"]
    assert row(t5, "kzoo T5", "torch")[-1] == "0.50x"
    assert row(gpt2, "kzoo", "jax")[-2:] == ["2.00x", "1.00x"]
    assert not any("T5" in line for line in gpt2)
