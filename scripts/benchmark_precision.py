"""kzoo's BertBackbone in float32 against mixed_bfloat16: speed, and the
loss curve of one fine-tune in each precision.

Speed: the same BERT shape (BERT-base by default: 12 layers, 768 hidden,
12 heads, 3072 intermediate, vocabulary 30,522) and batch (8 x 128) as
scripts/benchmark.py, measured the same way (its `measure_keras`: forward
with `predict_on_batch`, train step with `train_on_batch` + AdamW), once
under the float32 policy and once under `mixed_bfloat16` (float32
variables, bfloat16 compute), each in its own subprocess.

Loss curve: a classifier fine-tuned to tell which Austen novel a passage
comes from (`kzoo.datasets.austen_authorship`), the same batches in the
same order for `--curve-steps` steps, once in float32 and once in
mixed_bfloat16, from the same initial weights (the float32 model's,
copied). Dropout is off, so the two runs differ by precision only. By
default the backbone is the real MiniLM checkpoint (`all_minilm_l6_v2`);
`--curve-random` uses a random BERT of the speed shape instead (with the
tokenizer's vocabulary, whatever `--vocab` says). The
relative gap at each step is |bf16 - fp32| / fp32; the bfloat16 run
diverges when a loss is not finite, or when its loss averaged over the
last `--curve-every` steps exceeds float32's by more than
`--divergence-gap` (relative).

bfloat16 is fast only where the hardware computes in it: GPUs and TPUs,
and CPUs with AVX512_BF16 or AMX (printed first); elsewhere the backends
emulate it and mixed precision is slower than float32.

    python scripts/benchmark_precision.py                  # all backends
    python scripts/benchmark_precision.py --backends torch --layers 2 \\
        --hidden 256 --heads 4 --intermediate 1024 --curve-steps 60

Speed is measured here, never asserted in a test.
"""

import argparse
import importlib.util
import json
import math
import sys
from pathlib import Path

BACKENDS = ("jax", "tensorflow", "torch")
POLICIES = ("float32", "mixed_bfloat16")
CPU_FLAGS = ("avx512_bf16", "amx_bf16", "amx_tile")
CURVE_PRESET = "all_minilm_l6_v2"


def _load_benchmark():
    """scripts/benchmark.py, for its shapes, inputs and measurements."""
    path = Path(__file__).resolve().parent / "benchmark.py"
    spec = importlib.util.spec_from_file_location("kzoo_benchmark", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


benchmark = _load_benchmark()


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated Keras backends")
    benchmark.add_shape_arguments(parser)
    parser.add_argument("--skip-train", action="store_true",
                        help="speed: forward only")
    parser.add_argument("--skip-speed", action="store_true")
    parser.add_argument("--curve-steps", type=int, default=100,
                        help="fine-tuning steps of the loss curve (0: none)")
    parser.add_argument("--curve-every", type=int, default=10,
                        help="print the curves every this many steps")
    parser.add_argument("--curve-batch", type=int, default=8)
    parser.add_argument("--curve-seq", type=int, default=64)
    parser.add_argument("--curve-lr", type=float, default=5e-5)
    parser.add_argument("--curve-random", action="store_true",
                        help=f"a random BERT of the speed shape instead of "
                             f"{CURVE_PRESET}'s weights")
    parser.add_argument("--divergence-gap", type=float, default=0.1,
                        help="relative gap of the final losses that counts "
                             "as divergence")
    parser.add_argument("--json", help="also write the results here")
    # Internal: run one (backend, job) and print JSON.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("steps", "batch", "seq", "layers", "hidden", "heads",
                 "intermediate", "vocab", "curve_every", "curve_batch",
                 "curve_seq"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be at least 1")
    if args.curve_steps < 0 or args.warmup < 0:
        parser.error("--curve-steps and --warmup cannot be negative")
    if args.vocab <= 1000:
        # scripts/benchmark.py draws token ids from 1000 up.
        parser.error("--vocab must be above 1000")
    return args


def cpu_bf16_flags(cpuinfo="/proc/cpuinfo"):
    """{flag: present} for the CPU's bfloat16 instructions; None where the
    CPU's flags cannot be read (not Linux)."""
    try:
        text = Path(cpuinfo).read_text()
    except OSError:
        return None
    flags = set()
    for line in text.splitlines():
        if line.startswith("flags"):
            flags.update(line.split(":", 1)[1].split())
    return {flag: flag in flags for flag in CPU_FLAGS}


# ----------------------------------------------------------------------
# Speed: scripts/benchmark.py's kzoo measurement, under a dtype policy
# ----------------------------------------------------------------------
def measure_speed(policy, args):
    import keras
    # kzoo.BertBackbone(dtype=None) takes the global policy, so
    # benchmark.py's own builder gives the model in `policy`.
    keras.config.set_dtype_policy(policy)
    try:
        result = benchmark.measure_keras("kzoo", args)
    finally:
        keras.config.set_dtype_policy("float32")
    return result


# ----------------------------------------------------------------------
# Loss curve: the same fine-tune in float32 and in mixed_bfloat16
# ----------------------------------------------------------------------
def curve_batches(args):
    """The preprocessed batches, in order: the same for both runs."""
    import numpy as np

    import kzoo
    from kzoo import datasets

    (texts, labels), _, names = datasets.austen_authorship(
        per_novel=max(8, math.ceil(args.curve_steps * args.curve_batch / 3)),
        seed=0)
    preprocessor = kzoo.BertTextClassifier.preprocessor_for(
        CURVE_PRESET, sequence_length=args.curve_seq)
    x = {k: np.asarray(v) for k, v in preprocessor(texts).items()}
    labels = np.asarray(labels, "int32")
    batches = []
    for step in range(args.curve_steps):
        rows = (np.arange(args.curve_batch) + step * args.curve_batch) \
            % len(labels)
        batches.append(({k: v[rows] for k, v in x.items()}, labels[rows]))
    return batches, len(names), preprocessor.tokenizer.vocabulary_size


def build_classifier(policy, num_classes, vocabulary_size, args):
    import kzoo
    if args.curve_random:
        backbone = kzoo.BertBackbone(
            vocabulary_size=vocabulary_size, num_layers=args.layers,
            num_heads=args.heads, hidden_dim=args.hidden,
            intermediate_dim=args.intermediate, dropout=0.0,
            attention_dropout=0.0, max_sequence_length=512, dtype=policy)
    else:
        backbone = kzoo.BertBackbone.from_preset(
            CURVE_PRESET, dropout=0.0, attention_dropout=0.0, dtype=policy)
    return kzoo.BertTextClassifier(backbone=backbone, num_classes=num_classes,
                                   preprocessor=None, dropout=0.0)


def train_curve(policy, initial_weights, batches, num_classes,
                vocabulary_size, args):
    """Losses of `policy`'s run; starts from `initial_weights` (None: the
    fresh model's, which are returned with the losses)."""
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    model = build_classifier(policy, num_classes, vocabulary_size, args)
    if initial_weights is None:
        initial_weights = model.get_weights()
    else:
        model.set_weights(initial_weights)
    dtypes = {"variables": sorted({keras.backend.standardize_dtype(v.dtype)
                                   for v in model.weights}),
              "compute": model.backbone.dtype_policy.compute_dtype}
    model.compile(
        optimizer=keras.optimizers.AdamW(learning_rate=args.curve_lr),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    losses = [float(np.asarray(
        model.train_on_batch(x, y, return_dict=True)["loss"]))
        for x, y in batches]
    return initial_weights, losses, dtypes


def loss_curves(args):
    batches, num_classes, vocabulary_size = curve_batches(args)
    # The bfloat16 run starts from the float32 run's initial weights.
    initial, fp32, fp32_dtypes = train_curve(
        "float32", None, batches, num_classes, vocabulary_size, args)
    _, bf16, bf16_dtypes = train_curve(
        "mixed_bfloat16", initial, batches, num_classes, vocabulary_size,
        args)
    return {"float32": fp32, "mixed_bfloat16": bf16,
            "dtypes": {"float32": fp32_dtypes,
                                "mixed_bfloat16": bf16_dtypes},
            **curve_gaps(fp32, bf16, args.curve_every,
                         args.divergence_gap)}


def curve_gaps(fp32, bf16, window, divergence_gap):
    """Per-step relative gaps, the final (windowed) gap, and whether the
    bfloat16 curve diverged from the float32 one."""
    gaps = [abs(b - f) / abs(f) if f else abs(b - f)
            for f, b in zip(fp32, bf16)]
    window = max(1, min(window, len(fp32)))
    final_fp32 = sum(fp32[-window:]) / window
    final_bf16 = sum(bf16[-window:]) / window
    final_gap = (final_bf16 - final_fp32) / abs(final_fp32) \
        if final_fp32 else final_bf16 - final_fp32
    finite = all(math.isfinite(v) for v in bf16)
    return {"gaps": gaps, "max_gap": max(gaps) if finite else math.inf,
            "final_gap": final_gap,
            "diverged": not finite or final_gap > divergence_gap}


# ----------------------------------------------------------------------
# Worker and driver
# ----------------------------------------------------------------------
def worker(args):
    backend, job = args.worker.split(":")
    if job == "curve":
        result = loss_curves(args)
    else:
        result = measure_speed(job, args)
    result.update(backend=backend, job=job)
    print("RESULT " + json.dumps(result), flush=True)


def run_worker(backend, job, argv):
    return benchmark.run_script_worker(
        __file__, backend, [*argv, "--worker", f"{backend}:{job}"],
        f"{job} on {backend}")


def print_speed(args, speeds):
    def fmt(seconds):
        if not seconds:
            return f"{'-':>12}"
        rate = benchmark.tokens_per_s(args.batch, args.seq, seconds)
        return f"{rate:>12,.0f}"

    print(f"\nBERT {args.layers} layers x {args.hidden} hidden, "
          f"{args.heads} heads, {args.intermediate} intermediate, vocab "
          f"{args.vocab}; batch {args.batch} x {args.seq} tokens; "
          f"median of {args.steps} timed steps after {args.warmup} "
          "warm-up.\n")
    header = (f"{'backend':<11} {'policy':<15} {'fwd tok/s':>12} "
              f"{'train tok/s':>12} {'fwd x':>7} {'train x':>7}")
    print(header)
    print("-" * len(header))
    for backend in dict.fromkeys(r["backend"] for r in speeds):
        rows = {r["job"]: r for r in speeds if r["backend"] == backend}
        base = rows.get("float32")
        for policy in POLICIES:
            r = rows.get(policy)
            if r is None:
                continue
            ratios = []
            for key in ("forward_s", "train_s"):
                ok = base is not None and key in base and key in r
                ratios.append(f"{base[key] / r[key]:>7.2f}" if ok
                              else f"{'-':>7}")
            print(f"{backend:<11} {policy:<15} {fmt(r['forward_s'])} "
                  f"{fmt(r.get('train_s'))} {' '.join(ratios)}")
    print("\n(x: speed relative to float32 on the same backend; > 1: "
          "mixed_bfloat16 is faster)")


def print_curve(args, result):
    fp32, bf16 = result["float32"], result["mixed_bfloat16"]
    source = "random BERT of the speed shape" if args.curve_random \
        else CURVE_PRESET
    print(f"\n{result['backend']}: loss curve, Austen authorship, "
          f"{source}, batch {args.curve_batch} x {args.curve_seq}, AdamW "
          f"{args.curve_lr:g}, dropout off; mixed_bfloat16: variables "
          f"{', '.join(result['dtypes']['mixed_bfloat16']['variables'])}"
          f", compute {result['dtypes']['mixed_bfloat16']['compute']}")
    print(f"{'step':>6} {'float32':>10} {'bf16':>10} {'rel gap':>9}")
    for step in range(len(fp32)):
        if (step + 1) % args.curve_every == 0 or step == 0 or \
                step == len(fp32) - 1:
            print(f"{step + 1:>6} {fp32[step]:>10.4f} {bf16[step]:>10.4f} "
                  f"{result['gaps'][step]:>9.2e}")
    print(f"max relative gap {result['max_gap']:.2e}; final gap (mean of "
          f"the last {min(args.curve_every, len(fp32))} steps) "
          f"{result['final_gap']:+.2e}; "
          + ("DIVERGED" if result["diverged"] else "no divergence")
          + f" (threshold {args.divergence_gap:g})")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    backends = [b for b in args.backends.split(",") if b]
    for backend in backends:
        if backend not in BACKENDS:
            raise SystemExit(f"Unknown backend {backend!r}; use {BACKENDS}.")

    flags = cpu_bf16_flags()
    if flags is None:
        print("CPU bfloat16 instructions: unknown (no /proc/cpuinfo)")
    else:
        print("CPU bfloat16 instructions: " + ", ".join(
            f"{flag} {'yes' if present else 'no'}"
            for flag, present in flags.items()))

    jobs = []
    for backend in backends:
        if not args.skip_speed:
            jobs += [(backend, policy) for policy in POLICIES]
        if args.curve_steps:
            jobs.append((backend, "curve"))
    results = []
    for backend, job in jobs:
        print(f"running {job} on {backend} ...", flush=True)
        result = run_worker(backend, job, argv)
        results.append(result)
        if job == "curve":
            print(f"  {len(result['float32'])} steps in each precision "
                  f"({result['wall_s']:.0f} s)", flush=True)
        else:
            print(f"  forward {result['forward_s'] * 1000:.1f} ms/step"
                  + (f", train {result['train_s'] * 1000:.1f} ms/step"
                     if "train_s" in result else "")
                  + f"  ({result['wall_s']:.0f} s)", flush=True)
    speeds = [r for r in results if r["job"] != "curve"]
    if speeds:
        print_speed(args, speeds)
    for result in results:
        if result["job"] == "curve":
            print_curve(args, result)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "cpu_bf16": flags,
                       "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
