"""Speed of kzoo's BertBackbone against keras-hub's and Hugging Face's.

Same shape (BERT-base by default: 12 layers, 768 hidden, 12 heads, 3072
intermediate, vocabulary 30,522), random weights, one random batch shared
by every library (batch 8 x 128 tokens by default). Measured per library:

- forward: inference, compiled where the backend compiles.
  kzoo and keras-hub: `model.predict_on_batch` (jitted on jax, a
  tf.function on tensorflow, eager on torch), the same call for both.
  transformers: `BertModel` in eval mode under `torch.no_grad()`.
- train step: forward + backward + AdamW update, dropout on (0.1).
  kzoo and keras-hub: `train_on_batch` of the backbone's pooled output
  under mean squared error towards zeros, `keras.optimizers.AdamW`.
  transformers: the same loss on `pooler_output`, `torch.optim.AdamW`.

Warm-up steps (compilation, first-call allocation) are not timed. Every
(backend, library) pair runs in its own subprocess: KERAS_BACKEND is fixed
when Keras is imported, and separate processes keep one library's memory
and thread pools out of another's timing.

    python scripts/benchmark.py                        # all backends
    python scripts/benchmark.py --backends jax --layers 2 --steps 3

Speed is measured here, never asserted in a test.
"""

import argparse
import json
import os
import subprocess
import sys
import time

BACKENDS = ("jax", "tensorflow", "torch")
KERAS_LIBRARIES = ("kzoo", "keras-hub")


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated Keras backends")
    parser.add_argument("--libraries", default="kzoo,keras-hub,transformers",
                        help="comma-separated: kzoo, keras-hub, transformers")
    parser.add_argument("--steps", type=int, default=5,
                        help="timed steps per measurement")
    parser.add_argument("--warmup", type=int, default=2,
                        help="untimed steps first (compilation)")
    parser.add_argument("--batch", type=int, default=8)
    parser.add_argument("--seq", type=int, default=128)
    parser.add_argument("--layers", type=int, default=12)
    parser.add_argument("--hidden", type=int, default=768)
    parser.add_argument("--heads", type=int, default=12)
    parser.add_argument("--intermediate", type=int, default=3072)
    parser.add_argument("--vocab", type=int, default=30522)
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch.set_num_threads for every torch run "
                             "(kzoo/keras-hub on torch, transformers); "
                             "default: torch's own choice")
    parser.add_argument("--skip-train", action="store_true",
                        help="forward only")
    parser.add_argument("--json", help="also write the results here")
    # Internal: run one (backend, library) measurement and print JSON.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    return parser.parse_args(argv)


# ----------------------------------------------------------------------
# Shared inputs
# ----------------------------------------------------------------------
def make_inputs(args):
    import numpy as np
    rng = np.random.default_rng(0)
    token_ids = rng.integers(1000, args.vocab, (args.batch, args.seq))
    segment_ids = np.zeros((args.batch, args.seq))
    segment_ids[:, args.seq // 2:] = 1
    return {"token_ids": token_ids.astype("int32"),
            "segment_ids": segment_ids.astype("int32"),
            "padding_mask": np.ones((args.batch, args.seq), "int32")}


def time_steps(step, args):
    """Median seconds per step after the warm-up (kzoo.utils.timing)."""
    from kzoo.utils.timing import median_seconds
    return median_seconds(step, args.steps, args.warmup)


# ----------------------------------------------------------------------
# Keras libraries (kzoo, keras-hub), on the backend KERAS_BACKEND names
# ----------------------------------------------------------------------
def build_keras_backbone(library, args):
    config = dict(vocabulary_size=args.vocab, num_layers=args.layers,
                  num_heads=args.heads, hidden_dim=args.hidden,
                  intermediate_dim=args.intermediate, dropout=0.1,
                  max_sequence_length=512, num_segments=2)
    if library == "kzoo":
        import kzoo
        return kzoo.BertBackbone(**config, attention_dropout=0.1)
    import keras_hub
    return keras_hub.models.BertBackbone(**config)


def measure_keras(library, args):
    import keras
    import numpy as np

    keras.utils.set_random_seed(0)
    backbone = build_keras_backbone(library, args)
    x = make_inputs(args)
    result = {"params": int(backbone.count_params())}

    result["forward_s"] = time_steps(lambda: backbone.predict_on_batch(x),
                                     args)
    if not args.skip_train:
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in x}
        pooled = backbone(inputs)["pooled_output"]
        model = keras.Model(inputs, pooled)
        model.compile(optimizer=keras.optimizers.AdamW(learning_rate=1e-5),
                      loss="mse")
        y = np.zeros((args.batch, args.hidden), "float32")
        result["train_s"] = time_steps(lambda: model.train_on_batch(x, y),
                                       args)
    return result


# ----------------------------------------------------------------------
# Hugging Face transformers (PyTorch), the reference implementation
# ----------------------------------------------------------------------
def measure_transformers(args):
    import torch
    import transformers

    torch.manual_seed(0)
    config = transformers.BertConfig(
        vocab_size=args.vocab, hidden_size=args.hidden,
        num_hidden_layers=args.layers, num_attention_heads=args.heads,
        intermediate_size=args.intermediate, hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1, max_position_embeddings=512,
        type_vocab_size=2)
    model = transformers.BertModel(config)
    x = {k: torch.from_numpy(v).long() for k, v in make_inputs(args).items()}
    feed = {"input_ids": x["token_ids"], "token_type_ids": x["segment_ids"],
            "attention_mask": x["padding_mask"]}
    result = {"params": int(sum(p.numel() for p in model.parameters())),
              "attention": getattr(model.config, "_attn_implementation",
                                   None)}

    model.eval()

    def forward():
        with torch.no_grad():
            model(**feed)

    result["forward_s"] = time_steps(forward, args)
    if not args.skip_train:
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5)

        def train_step():
            optimizer.zero_grad(set_to_none=True)
            pooled = model(**feed).pooler_output
            loss = torch.mean(pooled ** 2)
            loss.backward()
            optimizer.step()

        result["train_s"] = time_steps(train_step, args)
    return result


def worker(args):
    backend, library = args.worker.split(":")
    if args.torch_threads and (backend == "torch" or
                               library == "transformers"):
        import torch
        torch.set_num_threads(args.torch_threads)
    if library == "transformers":
        result = measure_transformers(args)
    else:
        result = measure_keras(library, args)
    result.update(backend=backend, library=library)
    print("RESULT " + json.dumps(result), flush=True)


# ----------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------
def run_worker(backend, library, argv):
    env = {**os.environ, "KERAS_BACKEND": backend,
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    command = [sys.executable, os.path.abspath(__file__), *argv,
               "--worker", f"{backend}:{library}"]
    started = time.perf_counter()
    process = subprocess.run(command, env=env, capture_output=True, text=True)
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            result["wall_s"] = time.perf_counter() - started
            return result
    raise RuntimeError(
        f"{library} on {backend} failed (exit {process.returncode}):\n"
        f"{process.stdout[-3000:]}\n{process.stderr[-3000:]}")


def tokens_per_s(args, seconds):
    return args.batch * args.seq / seconds if seconds else float("nan")


def print_table(args, results):
    def fmt(value):
        return f"{value:>12,.0f}" if value == value else f"{'-':>12}"

    reference = next((r for r in results if r["library"] == "transformers"),
                     None)
    print(f"\nBERT {args.layers} layers x {args.hidden} hidden, "
          f"{args.heads} heads, {args.intermediate} intermediate, vocab "
          f"{args.vocab}; batch {args.batch} x {args.seq} tokens; "
          f"median of {args.steps} timed steps after {args.warmup} "
          "warm-up.\n")
    header = (f"{'backend':<11} {'library':<13} {'fwd tok/s':>12} "
              f"{'train tok/s':>12}")
    print(header)
    print("-" * len(header))
    for r in results:
        backend = "torch (HF)" if r["library"] == "transformers" else \
            r["backend"]
        print(f"{backend:<11} {r['library']:<13} "
              f"{fmt(tokens_per_s(args, r['forward_s']))} "
              f"{fmt(tokens_per_s(args, r.get('train_s')))}")

    print(f"\n{'ratios (speed)':<30} {'forward':>9} {'train':>9}")
    for backend in dict.fromkeys(r["backend"] for r in results):
        by_lib = {r["library"]: r for r in results
                  if r["backend"] == backend}
        mine = by_lib.get("kzoo")
        if mine is None:
            continue
        others = [("keras-hub", by_lib.get("keras-hub")),
                  ("transformers", reference)]
        for name, other in others:
            if other is None:
                continue
            row = []
            for key in ("forward_s", "train_s"):
                if key in mine and key in other:
                    row.append(f"{other[key] / mine[key]:>9.2f}")
                else:
                    row.append(f"{'-':>9}")
            print(f"{backend + ': kzoo/' + name:<30} {' '.join(row)}")
    print("\n(ratio > 1: kzoo is faster; tokens/s = batch x seq / median "
          "seconds per step)")


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    backends = [b for b in args.backends.split(",") if b]
    libraries = [lib for lib in args.libraries.split(",") if lib]
    for backend in backends:
        if backend not in BACKENDS:
            raise SystemExit(f"Unknown backend {backend!r}; use {BACKENDS}.")
    for library in libraries:
        if library not in KERAS_LIBRARIES + ("transformers",):
            raise SystemExit(f"Unknown library {library!r}.")

    results = []
    jobs = [(b, lib) for b in backends for lib in libraries
            if lib in KERAS_LIBRARIES]
    if "transformers" in libraries:
        jobs.append(("torch", "transformers"))
    for backend, library in jobs:
        print(f"running {library} on {backend} ...", flush=True)
        result = run_worker(backend, library, argv)
        results.append(result)
        print(f"  forward {result['forward_s'] * 1000:.1f} ms/step"
              + (f", train {result['train_s'] * 1000:.1f} ms/step"
                 if "train_s" in result else "")
              + f"  ({result['params']:,} parameters, "
              f"{result['wall_s']:.0f} s)", flush=True)
    print_table(args, results)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"args": vars(args), "results": results}, f, indent=2)


if __name__ == "__main__":
    main()
