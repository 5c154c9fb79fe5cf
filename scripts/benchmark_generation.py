"""Generation speed: kzoo vs keras-hub vs Hugging Face `transformers`.

GPT-2 small (124M parameters, random weights), a batch of prompts of
`--prompt-length` random tokens, `--new-tokens` new tokens each, greedy, no
stop token. Reported: new tokens per second (batch * new tokens / seconds),
the best of `--repeats` timed calls after one warm-up call (which compiles;
its time is reported separately as "first call").

Rows:
    kzoo              kzoo.GPT2CausalLM.generate, key/value cache, compiled
                      (jax.jit / XLA tf.function / torch eager loop)
    kzoo, no cache    the same loop recomputing the whole sequence each step
    keras-hub         keras_hub.models.GPT2CausalLM.generate
    transformers      GPT2LMHeadModel.generate (torch, eager, its own cache)

Every (implementation, backend) runs in its own subprocess, so backends
never share a process and each starts cold.

    python scripts/benchmark_generation.py                  # everything
    python scripts/benchmark_generation.py --backends jax torch --quick
    python scripts/benchmark_generation.py --json results.json

For use as a section of scripts/benchmark.py:

    import benchmark_generation as generation
    options = generation.default_options(threads=1, rounds=3)
    print(generation.format_table(generation.run(options), options))

On a shared CPU, `--threads 1 --rounds 3` gives the steadiest numbers:
every backend gets the same single compute thread, and each row keeps the
best of three interleaved rounds.
"""

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

BACKENDS = ("jax", "tensorflow", "torch")
IMPLEMENTATIONS = ("kzoo", "kzoo_no_cache", "keras_hub", "transformers")
LABELS = {"kzoo": "kzoo", "kzoo_no_cache": "kzoo, no cache",
          "keras_hub": "keras-hub", "transformers": "transformers"}

GPT2_SMALL = dict(vocabulary_size=50257, num_layers=12, num_heads=12,
                  hidden_dim=768, intermediate_dim=3072,
                  max_sequence_length=1024)
GPT2_TINY = dict(vocabulary_size=50257, num_layers=2, num_heads=4,
                 hidden_dim=64, intermediate_dim=256,
                 max_sequence_length=256)


# ----------------------------------------------------------------------
# Workers (one per subprocess)
# ----------------------------------------------------------------------
def _prompts(options):
    import numpy as np
    rng = np.random.default_rng(0)
    shape = (options["batch_size"], options["prompt_length"])
    return rng.integers(0, 50000, shape).astype("int32")


def _time_calls(fn, repeats):
    start = time.perf_counter()
    fn()
    first = time.perf_counter() - start
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return first, times


def _worker_kzoo(options, use_cache):
    import keras
    import kzoo
    keras.utils.set_random_seed(0)
    shape = GPT2_TINY if options["tiny"] else GPT2_SMALL
    lm = kzoo.GPT2CausalLM(kzoo.GPT2Backbone(**shape, dropout=0.0,
                                             attention_dropout=0.0))
    prompts = _prompts(options).tolist()
    new = options["new_tokens"]
    outputs = {}

    def call():
        outputs["ids"] = lm.generate(prompts, max_new_tokens=new,
                                     stop_token_ids=None, use_cache=use_cache)

    first, times = _time_calls(call, options["repeats"])
    assert all(len(ids) == options["prompt_length"] + new
               for ids in outputs["ids"])
    return first, times


def _worker_keras_hub(options):
    import keras
    import keras_hub
    import numpy as np
    keras.utils.set_random_seed(0)
    shape = dict(GPT2_TINY if options["tiny"] else GPT2_SMALL)
    backbone = keras_hub.models.GPT2Backbone(
        vocabulary_size=shape["vocabulary_size"],
        num_layers=shape["num_layers"], num_heads=shape["num_heads"],
        hidden_dim=shape["hidden_dim"],
        intermediate_dim=shape["intermediate_dim"],
        max_sequence_length=shape["max_sequence_length"], dropout=0.0)
    lm = keras_hub.models.GPT2CausalLM(backbone=backbone, preprocessor=None)
    lm.compile(sampler="greedy")
    prompts = _prompts(options)
    batch, length = prompts.shape
    total = length + options["new_tokens"]
    token_ids = np.zeros((batch, total), "int32")
    token_ids[:, :length] = prompts
    padding_mask = np.zeros((batch, total), "bool")
    padding_mask[:, :length] = True
    inputs = {"token_ids": token_ids, "padding_mask": padding_mask}
    outputs = {}

    def call():
        outputs["out"] = lm.generate(inputs, stop_token_ids=None)

    first, times = _time_calls(call, options["repeats"])
    assert np.asarray(outputs["out"]["padding_mask"]).all()
    return first, times


def _worker_transformers(options):
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    shape = GPT2_TINY if options["tiny"] else GPT2_SMALL
    config = transformers.GPT2Config(
        vocab_size=shape["vocabulary_size"], n_layer=shape["num_layers"],
        n_head=shape["num_heads"], n_embd=shape["hidden_dim"],
        n_inner=shape["intermediate_dim"],
        n_positions=shape["max_sequence_length"])
    model = transformers.GPT2LMHeadModel(config).eval()
    input_ids = torch.tensor(_prompts(options), dtype=torch.long)
    new = options["new_tokens"]
    outputs = {}

    def call():
        with torch.no_grad():
            outputs["out"] = model.generate(
                input_ids, attention_mask=torch.ones_like(input_ids),
                max_new_tokens=new, min_new_tokens=new, do_sample=False,
                pad_token_id=50256)

    first, times = _time_calls(call, options["repeats"])
    assert outputs["out"].shape[1] == input_ids.shape[1] + new
    return first, times


def worker(implementation, options):
    uses_torch = (implementation == "transformers"
                  or os.environ.get("KERAS_BACKEND") == "torch")
    if options.get("threads") and uses_torch:
        import torch
        torch.set_num_threads(int(options["threads"]))
    if implementation == "kzoo":
        first, times = _worker_kzoo(options, use_cache=True)
    elif implementation == "kzoo_no_cache":
        first, times = _worker_kzoo(options, use_cache=False)
    elif implementation == "keras_hub":
        first, times = _worker_keras_hub(options)
    else:
        first, times = _worker_transformers(options)
    new_tokens = options["batch_size"] * options["new_tokens"]
    best = min(times)
    return {"first_call_s": first, "times_s": times, "best_s": best,
            "tokens_per_s": new_tokens / best}


# ----------------------------------------------------------------------
# The parent: one subprocess per row
# ----------------------------------------------------------------------
def default_rows(backends, no_cache_backends):
    rows = []
    for backend in backends:
        rows.append(("kzoo", backend))
    for backend in no_cache_backends:
        rows.append(("kzoo_no_cache", backend))
    for backend in backends:
        rows.append(("keras_hub", backend))
    rows.append(("transformers", "torch"))
    return rows


def run_one(implementation, backend, options, timeout=1800):
    env = dict(os.environ, KERAS_BACKEND=backend,
               TF_CPP_MIN_LOG_LEVEL="3")
    threads = options.get("threads")
    if threads:
        # The same number of compute threads for every backend.
        n = str(threads)
        env.update(OMP_NUM_THREADS=n, MKL_NUM_THREADS=n,
                   TF_NUM_INTRAOP_THREADS=n, TF_NUM_INTEROP_THREADS="1")
        if threads == 1:
            env["XLA_FLAGS"] = (env.get("XLA_FLAGS", "") + " "
                                "--xla_cpu_multi_thread_eigen=false "
                                "intra_op_parallelism_threads=1").strip()
    repo = Path(__file__).resolve().parent.parent
    env["PYTHONPATH"] = str(repo) + os.pathsep + env.get("PYTHONPATH", "")
    command = [sys.executable, str(Path(__file__).resolve()), "--worker",
               implementation, "--options", json.dumps(options)]
    start = time.perf_counter()
    try:
        result = subprocess.run(command, env=env, capture_output=True,
                                text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return {"error": f"timed out after {timeout}s"}
    for line in reversed(result.stdout.splitlines()):
        if line.startswith("RESULT "):
            row = json.loads(line[len("RESULT "):])
            row["wall_s"] = time.perf_counter() - start
            return row
    tail = (result.stderr or result.stdout).strip().splitlines()[-5:]
    return {"error": " | ".join(tail) or f"exit {result.returncode}"}


def run(options, rows=None, verbose=True):
    """Every row, `options["rounds"]` times over (rows interleaved, so a
    burst of load from elsewhere on the machine hits one round of each row
    rather than all rounds of one); each row keeps its best round."""
    rows = rows or default_rows(options["backends"],
                                options["no_cache_backends"])
    best = {}
    for round_index in range(options.get("rounds", 1)):
        for implementation, backend in rows:
            if verbose:
                print(f"  [round {round_index + 1}] {LABELS[implementation]} "
                      f"on {backend} ...", file=sys.stderr, flush=True)
            row = run_one(implementation, backend, options)
            row.update(implementation=implementation, backend=backend)
            if verbose:
                if "error" in row:
                    print(f"    failed: {row['error']}", file=sys.stderr)
                else:
                    print(f"    {row['tokens_per_s']:.1f} tokens/s (first "
                          f"call {row['first_call_s']:.1f}s)", file=sys.stderr)
            key = (implementation, backend)
            previous = best.get(key)
            rounds = (previous or {}).get("rounds_tokens_per_s", [])
            if "tokens_per_s" in row:
                rounds = rounds + [row["tokens_per_s"]]
            if previous is None or "error" in previous or (
                    "tokens_per_s" in row
                    and row["tokens_per_s"] > previous["tokens_per_s"]):
                best[key] = row
            best[key]["rounds_tokens_per_s"] = rounds
    return [best[key] for key in rows]


def format_table(results, options=None):
    def tps(implementation, backend):
        for row in results:
            if (row["implementation"], row["backend"]) == (
                    implementation, backend) and "tokens_per_s" in row:
                return row["tokens_per_s"]
        return None

    lines = []
    if options:
        lines.append(
            f"GPT-2 {'tiny' if options['tiny'] else 'small (124M)'}, random "
            f"weights, batch {options['batch_size']}, "
            f"{options['prompt_length']}-token prompts, "
            f"{options['new_tokens']} new tokens, greedy; best of "
            f"{options['repeats']} after a warm-up call"
            + (f", best of {options['rounds']} interleaved rounds"
               if options.get("rounds", 1) > 1 else "")
            + (f"; {options['threads']} compute thread(s) per backend"
               if options.get("threads") else ""))
    header = (f"{'implementation':<16} {'backend':<11} {'tokens/s':>9} "
              f"{'first call s':>13} {'vs keras-hub':>13} {'vs kzoo jax':>12}")
    lines += [header, "-" * len(header)]
    kzoo_jax = tps("kzoo", "jax")
    for row in results:
        implementation, backend = row["implementation"], row["backend"]
        if "error" in row:
            lines.append(f"{LABELS[implementation]:<16} {backend:<11} "
                         f"failed: {row['error'][:60]}")
            continue
        value = row["tokens_per_s"]
        versus_hub = ""
        hub = tps("keras_hub", backend)
        if implementation == "kzoo" and hub:
            versus_hub = f"{value / hub:.2f}x"
        versus_jax = f"{value / kzoo_jax:.2f}x" if kzoo_jax else ""
        lines.append(
            f"{LABELS[implementation]:<16} {backend:<11} {value:>9.1f} "
            f"{row['first_call_s']:>13.1f} {versus_hub:>13} "
            f"{versus_jax:>12}")
    return "\n".join(lines)


def default_options(**overrides):
    """The options `run` and `format_table` take, with the issue's
    defaults (GPT-2 small, batch 4, 32-token prompts, 64 new tokens, every
    backend, the no-cache row on jax only)."""
    options = {"backends": list(BACKENDS), "no_cache_backends": ["jax"],
               "batch_size": 4, "prompt_length": 32, "new_tokens": 64,
               "repeats": 3, "tiny": False, "threads": None, "rounds": 1}
    unknown = set(overrides) - set(options)
    if unknown:
        raise ValueError(f"unknown benchmark options {sorted(unknown)}")
    options.update(overrides)
    return options


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS),
                        choices=BACKENDS)
    parser.add_argument("--no-cache-backends", nargs="*", default=None,
                        choices=BACKENDS,
                        help="backends for the 'kzoo, no cache' row "
                             "(default: jax only; it is slow by design)")
    parser.add_argument("--batch-size", type=int, default=4)
    parser.add_argument("--prompt-length", type=int, default=32)
    parser.add_argument("--new-tokens", type=int, default=64)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--tiny", action="store_true",
                        help="a 2-layer model: a smoke test of the script")
    parser.add_argument("--threads", type=int, default=None,
                        help="compute threads for every backend (default: "
                             "each library's own choice)")
    parser.add_argument("--rounds", type=int, default=1,
                        help="run every row this many times (interleaved) "
                             "and keep each row's best; on a shared machine "
                             "this filters out bursts of outside load")
    parser.add_argument("--quick", action="store_true",
                        help="one timed repeat")
    parser.add_argument("--only", nargs="+", choices=IMPLEMENTATIONS,
                        help="run only these implementations")
    parser.add_argument("--json", help="also write the results here")
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--options", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


def main(argv=None):
    args = parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(args.worker,
                                            json.loads(args.options))))
        return 0
    no_cache = (args.no_cache_backends if args.no_cache_backends is not None
                else [b for b in ("jax",) if b in args.backends])
    options = {
        "backends": args.backends, "no_cache_backends": no_cache,
        "batch_size": args.batch_size, "prompt_length": args.prompt_length,
        "new_tokens": args.new_tokens,
        "repeats": 1 if args.quick else args.repeats, "tiny": args.tiny,
        "threads": args.threads, "rounds": args.rounds,
    }
    rows = default_rows(args.backends, no_cache)
    if args.only:
        rows = [r for r in rows if r[0] in args.only]
    results = run(options, rows)
    print(format_table(results, options))
    if args.json:
        Path(args.json).write_text(json.dumps(
            {"options": options, "results": results}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
