"""Generation speed: kzoo vs keras-hub vs Hugging Face `transformers`.

Two models, random weights, greedy, no stop token:
  - decoder-only: GPT-2 small (124M parameters), a batch of prompts of
    `--prompt-length` random tokens, `--new-tokens` new tokens each;
  - encoder-decoder: T5 of t5-small's shape (v1.0: 6+6 layers, 512 wide,
    ReLU FFN, tied embeddings; 60M parameters), the same batch as encoder
    inputs, `--new-tokens` decoder tokens after the start token.
Reported: new tokens per second (batch * new tokens / seconds), the best
of `--repeats` timed calls after one warm-up call (which compiles; its
time is reported separately as "first call").

Rows:
    kzoo              kzoo.GPT2CausalLM.generate, key/value cache, compiled
                      (jax.jit / XLA tf.function / torch eager loop)
    kzoo, no cache    the same loop recomputing the whole sequence each step
    keras-hub         keras_hub.models.GPT2CausalLM.generate
    transformers      GPT2LMHeadModel.generate (torch, eager, its own cache)
    kzoo T5           kzoo.T5Seq2SeqLM.generate (the encoder once, then the
                      cached decoder loop, in one compiled program)
    keras-hub T5      keras_hub.models.T5Seq2SeqLM.generate
    transformers T5   T5ForConditionalGeneration.generate

Every (implementation, backend) runs in its own subprocess, so backends
never share a process and each starts cold.

    python scripts/benchmark_generation.py                  # everything
    python scripts/benchmark_generation.py --backends jax torch --quick
    python scripts/benchmark_generation.py --json results.json
    python scripts/benchmark_generation.py --models t5 --quick

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
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_worker import run_worker  # noqa: E402

BACKENDS = ("jax", "tensorflow", "torch")
IMPLEMENTATIONS = ("kzoo", "kzoo_no_cache", "keras_hub", "transformers",
                   "kzoo_t5", "keras_hub_t5", "transformers_t5")
LABELS = {"kzoo": "kzoo", "kzoo_no_cache": "kzoo, no cache",
          "keras_hub": "keras-hub", "transformers": "transformers",
          "kzoo_t5": "kzoo T5", "keras_hub_t5": "keras-hub T5",
          "transformers_t5": "transformers T5"}
MODELS = ("gpt2", "t5")
# Which model each implementation runs; its kzoo and keras-hub rows are
# what the ratio columns compare with.
MODEL_OF = {name: ("t5" if name.endswith("_t5") else "gpt2")
            for name in IMPLEMENTATIONS}
KZOO_ROW = {"gpt2": "kzoo", "t5": "kzoo_t5"}
KERAS_HUB_ROW = {"gpt2": "keras_hub", "t5": "keras_hub_t5"}

GPT2_SMALL = dict(vocabulary_size=50257, num_layers=12, num_heads=12,
                  hidden_dim=768, intermediate_dim=3072,
                  max_sequence_length=1024)
GPT2_TINY = dict(vocabulary_size=50257, num_layers=2, num_heads=4,
                 hidden_dim=64, intermediate_dim=256,
                 max_sequence_length=256)
# google-t5/t5-small's shape (T5 v1.0: ReLU FFN, tied embeddings).
T5_SMALL = dict(vocabulary_size=32128, num_layers=6, num_heads=8,
                hidden_dim=512, intermediate_dim=2048, key_value_dim=64)
T5_TINY = dict(vocabulary_size=32128, num_layers=2, num_heads=4,
               hidden_dim=64, intermediate_dim=256, key_value_dim=16)


# ----------------------------------------------------------------------
# Workers (one per subprocess)
# ----------------------------------------------------------------------
def _prompts(options, low=0, high=50000):
    """Random token ids, `(batch, prompt_length)`, in `[low, high)`."""
    import numpy as np
    rng = np.random.default_rng(0)
    shape = (options["batch_size"], options["prompt_length"])
    return rng.integers(low, high, shape).astype("int32")


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
    return _time_keras_hub_generate(lm, inputs, "padding_mask", options)


def _time_keras_hub_generate(lm, inputs, filled_mask, options):
    """Times keras-hub's `generate` on prepared inputs; checks that every
    position of `filled_mask` got a token (no early stop)."""
    import numpy as np
    outputs = {}

    def call():
        outputs["out"] = lm.generate(inputs, stop_token_ids=None)

    first, times = _time_calls(call, options["repeats"])
    assert np.asarray(outputs["out"][filled_mask]).all()
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


def _t5_shape(options):
    return T5_TINY if options["tiny"] else T5_SMALL


def _t5_sources(options):
    # Inside the vocabulary, clear of the pad (0) and end (1) ids.
    return _prompts(options, low=2, high=32000)


def _worker_kzoo_t5(options):
    import keras
    import kzoo
    keras.utils.set_random_seed(0)
    lm = kzoo.T5Seq2SeqLM(kzoo.T5Backbone(**_t5_shape(options), dropout=0.0),
                          preprocessor=None)
    sources = _t5_sources(options).tolist()
    new = options["new_tokens"]
    outputs = {}

    def call():
        outputs["ids"] = lm.generate(sources, max_new_tokens=new,
                                     stop_token_ids=None)

    first, times = _time_calls(call, options["repeats"])
    # The start token and `new` generated ones.
    assert all(len(ids) == 1 + new for ids in outputs["ids"])
    return first, times


def _worker_keras_hub_t5(options):
    import keras
    import keras_hub
    import numpy as np
    keras.utils.set_random_seed(0)
    shape = _t5_shape(options)
    backbone = keras_hub.models.T5Backbone(
        vocabulary_size=shape["vocabulary_size"],
        num_layers=shape["num_layers"], num_heads=shape["num_heads"],
        hidden_dim=shape["hidden_dim"],
        intermediate_dim=shape["intermediate_dim"],
        key_value_dim=shape["key_value_dim"], dropout=0.0,
        activation="relu", use_gated_activation=False,
        tie_embedding_weights=True)
    lm = keras_hub.models.T5Seq2SeqLM(backbone=backbone, preprocessor=None)
    lm.compile(sampler="greedy")
    sources = _t5_sources(options)
    batch = sources.shape[0]
    total = 1 + options["new_tokens"]
    # The decoder starts from the start token (T5's pad id, 0); keras-hub
    # fills the positions its padding mask leaves open.
    decoder_padding_mask = np.zeros((batch, total), "bool")
    decoder_padding_mask[:, 0] = True
    inputs = {"encoder_token_ids": sources,
              "encoder_padding_mask": np.ones(sources.shape, "bool"),
              "decoder_token_ids": np.zeros((batch, total), "int32"),
              "decoder_padding_mask": decoder_padding_mask}
    return _time_keras_hub_generate(lm, inputs, "decoder_padding_mask",
                                    options)


def _worker_transformers_t5(options):
    import torch
    import transformers
    transformers.logging.set_verbosity_error()
    torch.manual_seed(0)
    shape = _t5_shape(options)
    config = transformers.T5Config(
        vocab_size=shape["vocabulary_size"], d_model=shape["hidden_dim"],
        d_kv=shape["key_value_dim"], d_ff=shape["intermediate_dim"],
        num_layers=shape["num_layers"], num_heads=shape["num_heads"],
        feed_forward_proj="relu", tie_word_embeddings=True)
    model = transformers.T5ForConditionalGeneration(config).eval()
    input_ids = torch.tensor(_t5_sources(options), dtype=torch.long)
    new = options["new_tokens"]
    outputs = {}

    def call():
        with torch.no_grad():
            outputs["out"] = model.generate(
                input_ids, attention_mask=torch.ones_like(input_ids),
                max_new_tokens=new, min_new_tokens=new, do_sample=False,
                decoder_start_token_id=0, pad_token_id=0)

    first, times = _time_calls(call, options["repeats"])
    assert outputs["out"].shape[1] == 1 + new
    return first, times


WORKERS = {
    "kzoo": lambda options: _worker_kzoo(options, use_cache=True),
    "kzoo_no_cache": lambda options: _worker_kzoo(options, use_cache=False),
    "keras_hub": _worker_keras_hub,
    "transformers": _worker_transformers,
    "kzoo_t5": _worker_kzoo_t5,
    "keras_hub_t5": _worker_keras_hub_t5,
    "transformers_t5": _worker_transformers_t5,
}


def worker(implementation, options):
    uses_torch = (implementation.startswith("transformers")
                  or os.environ.get("KERAS_BACKEND") == "torch")
    if options.get("threads") and uses_torch:
        import torch
        torch.set_num_threads(int(options["threads"]))
    first, times = WORKERS[implementation](options)
    new_tokens = options["batch_size"] * options["new_tokens"]
    best = min(times)
    return {"first_call_s": first, "times_s": times, "best_s": best,
            "tokens_per_s": new_tokens / best}


# ----------------------------------------------------------------------
# The parent: one subprocess per row
# ----------------------------------------------------------------------
def default_rows(backends, no_cache_backends, models=MODELS):
    rows = []
    if "gpt2" in models:
        for backend in backends:
            rows.append(("kzoo", backend))
        for backend in no_cache_backends:
            rows.append(("kzoo_no_cache", backend))
        for backend in backends:
            rows.append(("keras_hub", backend))
        rows.append(("transformers", "torch"))
    if "t5" in models:
        for backend in backends:
            rows.append(("kzoo_t5", backend))
        for backend in backends:
            rows.append(("keras_hub_t5", backend))
        rows.append(("transformers_t5", "torch"))
    return rows


def run_one(implementation, backend, options, timeout=1800):
    row = run_worker(__file__, implementation, backend, options, timeout)
    if "process_s" in row:
        row["wall_s"] = row.pop("process_s")
    return row


def run(options, rows=None, verbose=True):
    """Every row, `options["rounds"]` times over (rows interleaved, so a
    burst of load from elsewhere on the machine hits one round of each row
    rather than all rounds of one); each row keeps its best round."""
    rows = rows or default_rows(options["backends"],
                                options["no_cache_backends"],
                                options.get("models", MODELS))
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


def _describe(model, options):
    size = ("tiny" if options["tiny"] else
            {"gpt2": "small (124M)", "t5": "t5-small's shape (60M)"}[model])
    inputs = ("prompts" if model == "gpt2" else "encoder inputs")
    return (f"{'GPT-2' if model == 'gpt2' else 'T5'} {size}, random "
            f"weights, batch {options['batch_size']}, "
            f"{options['prompt_length']}-token {inputs}, "
            f"{options['new_tokens']} new tokens, greedy; best of "
            f"{options['repeats']} after a warm-up call"
            + (f", best of {options['rounds']} interleaved rounds"
               if options.get("rounds", 1) > 1 else "")
            + (f"; {options['threads']} compute thread(s) per backend"
               if options.get("threads") else ""))


def format_table(results, options=None):
    """One table per model (GPT-2, then T5) with the rows it has; the
    ratio columns compare each row with the same model's keras-hub row on
    the same backend (kzoo rows only) and with kzoo on jax."""
    def tps(implementation, backend):
        for row in results:
            if (row["implementation"], row["backend"]) == (
                    implementation, backend) and "tokens_per_s" in row:
                return row["tokens_per_s"]
        return None

    lines = []
    for model in MODELS:
        rows = [row for row in results
                if MODEL_OF[row["implementation"]] == model]
        if not rows:
            continue
        if lines:
            lines.append("")
        if options:
            lines.append(_describe(model, options))
        header = (f"{'implementation':<16} {'backend':<11} {'tokens/s':>9} "
                  f"{'first call s':>13} {'vs keras-hub':>13} "
                  f"{'vs kzoo jax':>12}")
        lines += [header, "-" * len(header)]
        kzoo_jax = tps(KZOO_ROW[model], "jax")
        for row in rows:
            implementation, backend = row["implementation"], row["backend"]
            if "error" in row:
                lines.append(f"{LABELS[implementation]:<16} {backend:<11} "
                             f"failed: {row['error'][:60]}")
                continue
            value = row["tokens_per_s"]
            versus_hub = ""
            hub = tps(KERAS_HUB_ROW[model], backend)
            if implementation == KZOO_ROW[model] and hub:
                versus_hub = f"{value / hub:.2f}x"
            versus_jax = f"{value / kzoo_jax:.2f}x" if kzoo_jax else ""
            lines.append(
                f"{LABELS[implementation]:<16} {backend:<11} {value:>9.1f} "
                f"{row['first_call_s']:>13.1f} {versus_hub:>13} "
                f"{versus_jax:>12}")
    return "\n".join(lines)


def default_options(**overrides):
    """The options `run` and `format_table` take, with the issue's
    defaults (GPT-2 small and T5 of t5-small's shape, batch 4, 32-token
    prompts, 64 new tokens, every backend, the no-cache row (GPT-2) on jax
    only)."""
    options = {"backends": list(BACKENDS), "no_cache_backends": ["jax"],
               "models": list(MODELS),
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
    parser.add_argument("--models", nargs="+", default=list(MODELS),
                        choices=MODELS,
                        help="gpt2 (decoder-only), t5 (encoder-decoder)")
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
        "models": args.models,
        "batch_size": args.batch_size, "prompt_length": args.prompt_length,
        "new_tokens": args.new_tokens,
        "repeats": 1 if args.quick else args.repeats, "tiny": args.tiny,
        "threads": args.threads, "rounds": args.rounds,
    }
    rows = default_rows(args.backends, no_cache, args.models)
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
