"""Speed of kzoo's BertBackbone against keras-hub's and Hugging Face's.

Same shape (BERT-base by default: 12 layers, 768 hidden, 12 heads, 3072
intermediate, vocabulary 30,522), random weights, one random batch shared
by every library (batch 8 x 128 tokens by default). Sections (--sections;
the default is speed,ceiling,load; --sweep adds the sweep):

speed: tokens/s per library, and ratios.
  - forward: inference, compiled where the backend compiles.
    kzoo and keras-hub: `model.predict_on_batch` (jitted on jax, a
    tf.function on tensorflow, eager on torch), the same call for both.
    transformers: `BertModel` in eval mode under `torch.no_grad()`.
  - train step: forward + backward + AdamW update, dropout on (0.1).
    kzoo and keras-hub: `train_on_batch` of the backbone's pooled output
    under mean squared error towards zeros, both with the same optimizer,
    `keras.optimizers.AdamW`: the "train" column and its ratios compare
    the two models like for like. kzoo is timed once more with the AdamW
    its tasks train with, `kzoo.training.AdamW` (Keras' numbers, one fused
    kernel per parameter on torch and tensorflow; Keras' update on jax):
    the "kzoo fused AdamW" column, and what it adds on top.
    transformers: the same loss on `pooler_output`, `torch.optim.AdamW`
    with `fused=True`, the default of transformers' Trainer on torch >= 2.8.
ceiling: the backend's own matmul (jax.jit(jnp.matmul), tf.function
  (tf.matmul), torch.matmul) timed at the model's shapes (tokens x hidden
  @ hidden x hidden for query/key/value/output, the two feed-forward
  matmuls, the per-head attention matmuls), in float32. The ceiling is
  the GFLOP/s of that mix (its FLOPs over its seconds, each shape counted
  as often as a layer runs it). The model's FLOPs per token count its
  matmuls only: forward 2 x (4 H^2 + 2 H I) + 4 S H per layer (S: sequence
  length) plus the pooler's 2 H^2 per sequence; a training step ~3x that
  (the backward pass runs two matmuls per forward one). Each row prints
  the GFLOP/s it achieved and its fraction of its backend's ceiling
  (transformers: torch's).
load: `from_preset` of a BERT-base-shaped preset from a local folder
  (weights already cached, as after a first download), in a fresh
  subprocess per backend and library; printed: seconds of the call itself
  (imports apart) and ratios. keras-hub loads a folder its own
  `save_to_preset` wrote, transformers `BertModel.from_pretrained` a folder
  `save_pretrained` wrote (safetensors). The presets are written once
  (random weights) into a temporary folder, or into --preset-dir, where
  later runs find them.
sweep: sequence length x batch size (--sweep-seqs, --sweep-batches;
  128,256,512 x 1,8,32), forward and training tokens/s and peak memory per
  point. Peak memory is the worker process's peak RSS (VmHWM of
  /proc/self/status, read before the model is built and at the end of
  the forward and of the training phase: the process's peak since it
  started, imports and model included, so the training column includes
  the forward's peak); on an
  accelerator also the device's peak bytes in use (jax memory_stats, torch
  max_memory_allocated, TensorFlow get_memory_info), with the same
  since-start meaning. --sweep-steps timed steps (2) after one warm-up.

Warm-up steps (compilation, first-call allocation) are not timed. Every
(backend, library) pair runs in its own subprocess: KERAS_BACKEND is fixed
when Keras is imported, and separate processes keep one library's memory
and thread pools out of another's timing. Output: markdown tables.

    python scripts/benchmark.py                        # all backends
    python scripts/benchmark.py --backends jax --layers 2 --steps 3
    python scripts/benchmark.py --sections sweep --layers 2   # sweep only
    python scripts/benchmark.py --sweep --preset-dir /tmp/bert_presets

Speed is measured here, never asserted in a test.
"""

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

BACKENDS = ("jax", "tensorflow", "torch")
KERAS_LIBRARIES = ("kzoo", "keras-hub")
LIBRARIES = KERAS_LIBRARIES + ("transformers",)
SECTIONS = ("speed", "ceiling", "load", "sweep")
# The target for loading a cached BERT-base preset.
LOAD_TARGET_S = 3.0
# A training step's FLOPs over its forward pass's: the backward pass runs
# two matmuls (gradients of the input and of the weights) per forward one.
TRAIN_FLOPS_FACTOR = 3


def int_list(text):
    return [int(value) for value in text.split(",") if value]


def add_shape_arguments(parser):
    """The timing and BERT-shape options (BERT-base by default), shared
    with scripts/benchmark_precision.py."""
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


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--backends", default=",".join(BACKENDS),
                        help="comma-separated Keras backends")
    parser.add_argument("--libraries", default="kzoo,keras-hub,transformers",
                        help="comma-separated: kzoo, keras-hub, transformers")
    parser.add_argument("--sections", default="speed,ceiling,load",
                        help=f"comma-separated, of {', '.join(SECTIONS)}")
    parser.add_argument("--sweep", action="store_true",
                        help="add the sweep section (sequence length x "
                             "batch size)")
    add_shape_arguments(parser)
    parser.add_argument("--sweep-seqs", type=int_list, default=[128, 256, 512],
                        help="sweep: comma-separated sequence lengths")
    parser.add_argument("--sweep-batches", type=int_list, default=[1, 8, 32],
                        help="sweep: comma-separated batch sizes")
    parser.add_argument("--sweep-steps", type=int, default=2,
                        help="sweep: timed steps per point (one warm-up)")
    parser.add_argument("--load-runs", type=int, default=1,
                        help="load: fresh subprocesses per (backend, "
                             "library); the fastest is kept")
    parser.add_argument("--preset-dir",
                        help="load: keep the saved presets here (reused "
                             "by later runs); default: a temporary folder")
    parser.add_argument("--torch-threads", type=int, default=None,
                        help="torch.set_num_threads for every torch run "
                             "(kzoo/keras-hub on torch, transformers); "
                             "default: torch's own choice")
    parser.add_argument("--skip-train", action="store_true",
                        help="forward only")
    parser.add_argument("--json", help="also write the results here")
    # Internal: run one measurement in this process and print JSON.
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    parser.add_argument("--task", default="speed", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    for name in ("steps", "layers", "batch", "seq", "sweep_steps",
                 "load_runs"):
        if getattr(args, name) < 1:
            parser.error(f"--{name.replace('_', '-')} must be >= 1")
    if args.warmup < 0:
        parser.error("--warmup must be >= 0")
    if args.hidden % args.heads:
        parser.error(f"--hidden ({args.hidden}) must be a multiple of "
                     f"--heads ({args.heads})")
    if args.seq > 512 or max(args.sweep_seqs or [0]) > 512:
        parser.error("sequence lengths are at most 512 (BERT's position "
                     "table)")
    return args


def sections_of(args):
    sections = [s for s in args.sections.split(",") if s]
    for section in sections:
        if section not in SECTIONS:
            raise SystemExit(f"Unknown section {section!r}; use {SECTIONS}.")
    if args.sweep and "sweep" not in sections:
        sections.append("sweep")
    return sections


# ----------------------------------------------------------------------
# FLOPs: the model's matmuls, shape by shape
# ----------------------------------------------------------------------
def matmul_shapes(args, batch=None, seq=None):
    """The matmuls one encoder layer runs on a (batch, seq) input, as
    (name, batch dims, m, k, n, count): `count` products of (m, k) @
    (k, n), each over `batch dims` independent matrices."""
    batch = args.batch if batch is None else batch
    seq = args.seq if seq is None else seq
    tokens, hidden, inner = batch * seq, args.hidden, args.intermediate
    head = hidden // args.heads
    return [
        ("q/k/v/output", 1, tokens, hidden, hidden, 4),
        ("ffn in", 1, tokens, hidden, inner, 1),
        ("ffn out", 1, tokens, inner, hidden, 1),
        ("q @ k^T", batch * args.heads, seq, head, seq, 1),
        ("probs @ v", batch * args.heads, seq, seq, head, 1),
    ]


def matmul_flops(shape):
    _, batch_dims, m, k, n, _ = shape
    return 2 * batch_dims * m * k * n


def flops_per_token(args, seq=None, train=False):
    """Forward (or training-step) matmul FLOPs per token: every layer's
    matmuls, and the pooler's on each sequence's first token. Embedding
    lookups, layer norms, softmax and GELU are not matmuls and are left
    out (a few percent at BERT-base's shape)."""
    seq = args.seq if seq is None else seq
    per_sequence = args.layers * sum(
        matmul_flops(shape) * shape[-1]
        for shape in matmul_shapes(args, batch=1, seq=seq))
    per_sequence += 2 * args.hidden * args.hidden        # pooler
    forward = per_sequence / seq
    return forward * TRAIN_FLOPS_FACTOR if train else forward


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


def median_seconds(step, steps, warmup):
    """kzoo.utils.timing.median_seconds, loaded from its file alone:
    importing the kzoo package loads Keras and its backend (~0.9 GB of
    RSS), which would count in the transformers worker's peak memory."""
    import importlib.util
    package = importlib.util.find_spec("kzoo")   # runs no kzoo code
    path = os.path.join(os.path.dirname(package.origin), "utils",
                        "timing.py")
    spec = importlib.util.spec_from_file_location("kzoo_timing", path)
    timing = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(timing)
    return timing.median_seconds(step, steps, warmup)


def time_steps(step, args):
    """Median seconds per step after the warm-up."""
    return median_seconds(step, args.steps, args.warmup)


_PEAK_RSS_MIB = 0.0


def peak_rss_mib():
    """This process's peak resident set since it started, in MiB.

    Linux: VmHWM of /proc/self/status, the high-water mark of this
    program's own memory. Not getrusage's ru_maxrss: Linux carries it
    over fork + exec, so a worker started from a 1.2 GB process (a test
    run) reported >= 1.2 GB however little it used. Elsewhere ru_maxrss
    (bytes on macOS). The largest reading so far is returned: the kernel
    updates VmHWM's high-water mark lazily and shows the current RSS
    when that is higher, so a later reading can come out lower (seen:
    4,120.1 MiB after 4,120.3 MiB)."""
    global _PEAK_RSS_MIB
    reading = None
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    reading = int(line.split()[1]) / 2 ** 10     # kB
                    break
    except OSError:
        pass
    if reading is None:
        import resource
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        reading = peak / (2 ** 20 if sys.platform == "darwin" else 2 ** 10)
    _PEAK_RSS_MIB = max(_PEAK_RSS_MIB, reading)
    return _PEAK_RSS_MIB


def device_peak_mib(backend):
    """Peak accelerator memory in use since the process started, in MiB;
    None on CPU. `backend` names the framework the model runs on (torch
    for transformers)."""
    if backend == "jax":
        import jax
        device = jax.devices()[0]
        if device.platform == "cpu":
            return None
        stats = device.memory_stats() or {}
        peak = stats.get("peak_bytes_in_use")
    elif backend == "tensorflow":
        import tensorflow as tf
        if not tf.config.list_logical_devices("GPU"):
            return None
        peak = tf.config.experimental.get_memory_info("GPU:0")["peak"]
    else:
        import torch
        if not torch.cuda.is_available():
            return None
        peak = torch.cuda.max_memory_allocated()
    return None if peak is None else peak / 2 ** 20


def memory_fields(prefix, backend):
    fields = {f"{prefix}_peak_rss_mib": peak_rss_mib()}
    device = device_peak_mib(backend)
    if device is not None:
        fields[f"{prefix}_device_peak_mib"] = device
    return fields


# ----------------------------------------------------------------------
# Keras libraries (kzoo, keras-hub), on the backend KERAS_BACKEND names
# ----------------------------------------------------------------------
def backbone_config(args):
    return dict(vocabulary_size=args.vocab, num_layers=args.layers,
                num_heads=args.heads, hidden_dim=args.hidden,
                intermediate_dim=args.intermediate, dropout=0.1,
                max_sequence_length=512, num_segments=2)


def build_keras_backbone(library, args):
    config = backbone_config(args)
    if library == "kzoo":
        import kzoo
        return kzoo.BertBackbone(**config, attention_dropout=0.1)
    import keras_hub
    return keras_hub.models.BertBackbone(**config)


def measure_keras(library, args):
    import keras
    import numpy as np

    backend = keras.backend.backend()
    if library == "kzoo":
        import kzoo
    else:
        import keras_hub  # noqa: F401
    # The libraries' own footprint, before any model: what the peaks
    # below add to it is the model's.
    baseline = peak_rss_mib()
    keras.utils.set_random_seed(0)
    backbone = build_keras_backbone(library, args)
    x = make_inputs(args)
    result = {"params": int(backbone.count_params()),
              "baseline_peak_rss_mib": baseline}

    result["forward_s"] = time_steps(lambda: backbone.predict_on_batch(x),
                                     args)
    result.update(memory_fields("forward", backend))
    if not args.skip_train:
        inputs = {name: keras.Input((None,), dtype="int32", name=name)
                  for name in x}
        pooled = backbone(inputs)["pooled_output"]
        y = np.zeros((args.batch, args.hidden), "float32")

        def train_seconds(optimizer):
            model = keras.Model(inputs, pooled)
            model.compile(optimizer=optimizer, loss="mse")
            return time_steps(lambda: model.train_on_batch(x, y), args)

        # Like for like: both libraries under Keras' own AdamW.
        result["train_s"] = train_seconds(
            keras.optimizers.AdamW(learning_rate=1e-5))
        result.update(memory_fields("train", backend))
        if library == "kzoo":
            # On top: what kzoo's tasks train with.
            result["train_fused_s"] = train_seconds(
                kzoo.training.AdamW(learning_rate=1e-5))
    return result


# ----------------------------------------------------------------------
# Hugging Face transformers (PyTorch), the reference implementation
# ----------------------------------------------------------------------
def transformers_config(args):
    import transformers
    return transformers.BertConfig(
        vocab_size=args.vocab, hidden_size=args.hidden,
        num_hidden_layers=args.layers, num_attention_heads=args.heads,
        intermediate_size=args.intermediate, hidden_dropout_prob=0.1,
        attention_probs_dropout_prob=0.1, max_position_embeddings=512,
        type_vocab_size=2)


def torch_device():
    import torch
    return "cuda" if torch.cuda.is_available() else "cpu"


def torch_synchronize():
    """Wait for queued GPU kernels, so that a step's time is its own."""
    import torch
    if torch.cuda.is_available():
        torch.cuda.synchronize()


def measure_transformers(args):
    import torch
    import transformers

    # transformers imports its modelling code on first use: resolve
    # BertModel before taking the baseline (as measure_keras's), else the
    # import counts as the model's memory (~1 GB, measured).
    bert_model = transformers.BertModel
    baseline = peak_rss_mib()
    torch.manual_seed(0)
    device = torch_device()
    model = bert_model(transformers_config(args)).to(device)
    x = {k: torch.from_numpy(v).long().to(device)
         for k, v in make_inputs(args).items()}
    feed = {"input_ids": x["token_ids"], "token_type_ids": x["segment_ids"],
            "attention_mask": x["padding_mask"]}
    result = {"params": int(sum(p.numel() for p in model.parameters())),
              "baseline_peak_rss_mib": baseline,
              "attention": getattr(model.config, "_attn_implementation",
                                   None)}

    model.eval()

    def forward():
        with torch.no_grad():
            model(**feed)
        torch_synchronize()

    result["forward_s"] = time_steps(forward, args)
    result.update(memory_fields("forward", "torch"))
    if not args.skip_train:
        model.train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-5,
                                      fused=True)

        def train_step():
            optimizer.zero_grad(set_to_none=True)
            pooled = model(**feed).pooler_output
            loss = torch.mean(pooled ** 2)
            loss.backward()
            optimizer.step()
            torch_synchronize()

        result["train_s"] = time_steps(train_step, args)
        result.update(memory_fields("train", "torch"))
    return result


# ----------------------------------------------------------------------
# The matmul ceiling: the backend's own matmul at the model's shapes
# ----------------------------------------------------------------------
def matmul_step(backend, batch_dims, m, k, n):
    """A function that runs one float32 (m, k) @ (k, n) product (over
    `batch_dims` matrices when > 1) with `backend`'s own matmul, compiled
    as the backend compiles a model, and waits for the result."""
    import numpy as np
    rng = np.random.default_rng(0)
    lead = (batch_dims,) if batch_dims > 1 else ()
    a = rng.standard_normal(lead + (m, k)).astype("float32")
    b = rng.standard_normal(lead + (k, n)).astype("float32")
    if backend == "jax":
        import jax
        import jax.numpy as jnp
        matmul = jax.jit(jnp.matmul)
        a, b = jnp.asarray(a), jnp.asarray(b)
        return lambda: matmul(a, b).block_until_ready()
    if backend == "tensorflow":
        import tensorflow as tf
        matmul = tf.function(tf.matmul)
        a, b = tf.constant(a), tf.constant(b)
        if not tf.config.list_logical_devices("GPU"):
            # Eager TensorFlow returns from a CPU op when it has run.
            return lambda: matmul(a, b)

        def step():
            matmul(a, b)
            tf.test.experimental.sync_devices()
        return step
    import torch
    device = torch_device()
    a = torch.from_numpy(a).to(device)
    b = torch.from_numpy(b).to(device)

    def step():
        with torch.no_grad():
            torch.matmul(a, b)
        torch_synchronize()
    return step


def time_matmul(step, args, target_s=0.05):
    """Median seconds per call of `step`. A small product takes tens of
    microseconds, about what the timer and one interruption cost: each
    timed sample runs as many calls as fill ~`target_s`, and at least 5
    samples are taken (the products are cheap beside a model's steps)."""
    for _ in range(max(args.warmup, 1)):          # compile, allocate
        step()
    start = time.perf_counter()
    step()
    once = time.perf_counter() - start
    calls = max(1, min(1000, round(target_s / max(once, 1e-6))))

    def sample():
        for _ in range(calls):
            step()
    return median_seconds(sample, max(args.steps, 5), 0) / calls


def measure_matmul(backend, args):
    """GFLOP/s of each of the model's matmul shapes, and the ceiling: the
    FLOPs of one layer's matmuls over the seconds they took."""
    shapes = []
    total_flops = total_seconds = 0.0
    for shape in matmul_shapes(args):
        name, batch_dims, m, k, n, count = shape
        seconds = time_matmul(matmul_step(backend, batch_dims, m, k, n),
                              args)
        flops = matmul_flops(shape)
        shapes.append({"name": name, "shape": [batch_dims, m, k, n],
                       "count": count, "seconds": seconds,
                       "gflops": flops / seconds / 1e9})
        total_flops += flops * count
        total_seconds += seconds * count
    return {"shapes": shapes,
            "ceiling_gflops": total_flops / total_seconds / 1e9}


# ----------------------------------------------------------------------
# Loading: presets written once, then from_preset in a fresh process
# ----------------------------------------------------------------------
def preset_folder(root, library):
    return os.path.join(root, library.replace("-", "_"))


def preset_shape(args):
    """What a saved preset must match to be reused."""
    return {name: getattr(args, name)
            for name in ("layers", "hidden", "heads", "intermediate",
                         "vocab")}


def save_preset(library, folder, args):
    """Write `library`'s BERT of the benchmark's shape (random weights)
    into `folder`, unless a preset of that shape is already there."""
    stamp = os.path.join(folder, "benchmark_shape.json")
    if os.path.exists(stamp):
        with open(stamp) as f:
            if json.load(f) == preset_shape(args):
                return {"saved": False}
    if os.path.exists(folder):
        shutil.rmtree(folder)
    os.makedirs(folder)
    if library == "transformers":
        import transformers
        model = transformers.BertModel(transformers_config(args))
        model.save_pretrained(folder)
    else:
        build_keras_backbone(library, args).save_to_preset(folder)
    with open(stamp, "w") as f:
        json.dump(preset_shape(args), f)
    return {"saved": True}


def load_preset(library, folder):
    """Seconds to import the library and to load its preset (separately),
    in this process; call it in a fresh one."""
    start = time.perf_counter()
    if library == "kzoo":
        import kzoo
        load = kzoo.BertBackbone.from_preset
    elif library == "keras-hub":
        import keras_hub
        load = keras_hub.models.BertBackbone.from_preset
    else:
        import transformers
        load = transformers.BertModel.from_pretrained
    imported = time.perf_counter()
    model = load(folder)
    loaded = time.perf_counter()
    if library == "transformers":
        params = sum(p.numel() for p in model.parameters())
    else:
        params = model.count_params()
    return {"import_s": imported - start, "load_s": loaded - imported,
            "params": int(params)}


def worker(args):
    backend, library = args.worker.split(":")
    if args.torch_threads and (backend == "torch" or
                               library == "transformers"):
        import torch
        torch.set_num_threads(args.torch_threads)
    if args.task == "matmul":
        result = measure_matmul(backend, args)
    elif args.task == "save":
        result = save_preset(library, preset_folder(args.preset_dir,
                                                    library), args)
    elif args.task == "load":
        result = load_preset(library, preset_folder(args.preset_dir,
                                                    library))
    elif library == "transformers":
        result = measure_transformers(args)
    else:
        result = measure_keras(library, args)
    result.update(backend=backend, library=library)
    print("RESULT " + json.dumps(result), flush=True)


# ----------------------------------------------------------------------
# Driver
# ----------------------------------------------------------------------
def run_worker(backend, library, argv, task="speed", extra=()):
    # Later options win: `extra` overrides the user's (the sweep's sizes).
    return run_script_worker(
        __file__, backend,
        [*argv, *extra, "--worker", f"{backend}:{library}", "--task", task],
        f"{task}: {library} on {backend}")


def run_script_worker(script, backend, arguments, what):
    """`script *arguments` in a fresh process under `backend`: the row it
    printed as `RESULT <json>`, with `wall_s`; a failure raises with its
    output. (Shared with benchmark_precision.py, whose workers take the
    same command-line options; benchmark_worker.py serves the scripts
    whose workers take JSON options and report errors as rows.)"""
    env = {**os.environ, "KERAS_BACKEND": backend,
           "TF_CPP_MIN_LOG_LEVEL": "2"}
    command = [sys.executable, os.path.abspath(script), *arguments]
    started = time.perf_counter()
    process = subprocess.run(command, env=env, capture_output=True, text=True)
    for line in process.stdout.splitlines():
        if line.startswith("RESULT "):
            result = json.loads(line[len("RESULT "):])
            result["wall_s"] = time.perf_counter() - started
            return result
    raise RuntimeError(
        f"{what} failed (exit {process.returncode}):\n"
        f"{process.stdout[-3000:]}\n{process.stderr[-3000:]}")


def speed_jobs(backends, libraries):
    jobs = [(b, lib) for b in backends for lib in libraries
            if lib in KERAS_LIBRARIES]
    if "transformers" in libraries:
        jobs.append(("torch", "transformers"))
    return jobs


def tokens_per_s(batch, seq, seconds):
    return batch * seq / seconds if seconds else float("nan")


def markdown(header, rows, text_columns=1):
    """A markdown table; numbers are formatted by the caller. The first
    `text_columns` columns are left-aligned, the numbers right-aligned."""
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if i < text_columns else "---:"
                            for i in range(len(header))) + "|"]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |"
              for row in rows]
    return "\n".join(lines)


def fmt(value, spec=",.0f"):
    return "-" if value is None or value != value else format(value, spec)


def label(result):
    """Backend column: transformers runs on torch, outside Keras."""
    return "torch (HF)" if result["library"] == "transformers" else \
        result["backend"]


def ratio(mine, other, key):
    """How many times faster kzoo is (other's seconds over kzoo's)."""
    if mine is None or other is None or key not in mine or key not in other:
        return None
    return other[key] / mine[key]


def peers(results, backend):
    """kzoo's row on `backend`, and the rows it is compared with:
    keras-hub on the same backend, transformers (torch)."""
    by_lib = {r["library"]: r for r in results
              if r["backend"] == backend and r["library"] != "transformers"}
    reference = next((r for r in results
                      if r["library"] == "transformers"), None)
    return by_lib.get("kzoo"), [("keras-hub", by_lib.get("keras-hub")),
                                ("transformers", reference)]


def ratio_rows(results, keys):
    """One table row per (backend, peer) pair kzoo is compared with: the
    pair's name, then kzoo's speed-up on each of `keys` (seconds)."""
    rows = []
    for backend in dict.fromkeys(r["backend"] for r in results):
        mine, others = peers(results, backend)
        for name, other in others:
            if mine is not None and other is not None:
                rows.append([f"{backend}: kzoo / {name}"]
                            + [fmt(ratio(mine, other, key), ".2f")
                               for key in keys])
    return rows


def describe(args):
    return (f"BERT {args.layers} layers x {args.hidden} hidden, "
            f"{args.heads} heads, {args.intermediate} intermediate, vocab "
            f"{args.vocab}")


def format_speed(args, results):
    lines = [f"### Speed\n\n{describe(args)}; batch {args.batch} x "
             f"{args.seq} tokens; median of {args.steps} timed steps after "
             f"{args.warmup} warm-up.\n"]
    rows = [[label(r), r["library"],
             fmt(tokens_per_s(args.batch, args.seq, r["forward_s"])),
             fmt(tokens_per_s(args.batch, args.seq, r.get("train_s"))),
             fmt(tokens_per_s(args.batch, args.seq,
                              r.get("train_fused_s")))]
            for r in results]
    lines.append(markdown(["backend", "library", "forward tok/s",
                           "train tok/s", "kzoo fused AdamW tok/s"],
                          rows, 2))
    rows = ratio_rows(results, ("forward_s", "train_s"))
    if rows:
        lines.append("\n" + markdown(["speed ratio", "forward", "train"],
                                     rows))
        lines.append("\n(ratio > 1: kzoo is faster; tokens/s = batch x "
                     "seq / median seconds per step; train: kzoo and "
                     "keras-hub both under keras.optimizers.AdamW, "
                     "transformers under torch's fused AdamW)")
    rows = [[r["backend"], fmt(r["train_s"] / r["train_fused_s"], ".2f")]
            for r in results if r.get("train_fused_s")]
    if rows:
        lines.append("\n" + markdown(
            ["backend", "kzoo's fused AdamW over Keras' AdamW"], rows))
    return "\n".join(lines)


def achieved_gflops(args, result, key):
    if key not in result:
        return None
    per_token = flops_per_token(args, train=key == "train_s")
    return per_token * tokens_per_s(args.batch, args.seq, result[key]) / 1e9


def format_ceiling(args, ceilings, results):
    """`ceilings`: backend -> measure_matmul's result; `results`: the
    speed rows. Each row's fraction is of its own framework's ceiling."""
    lines = [f"### Matmul ceiling\n\nThe backend's own float32 matmul at "
             f"the model's shapes (batch {args.batch} x {args.seq} tokens), "
             f"GFLOP/s; the ceiling is the mix one layer runs.\n"]
    names = [s["name"] for s in next(iter(ceilings.values()))["shapes"]]
    rows = [[backend] + [fmt(s["gflops"], ",.1f") for s in c["shapes"]]
            + [fmt(c["ceiling_gflops"], ",.1f")]
            for backend, c in ceilings.items()]
    lines.append(markdown(["backend"] + names + ["ceiling"], rows))
    forward = flops_per_token(args)
    lines.append(f"\nModel FLOPs per token (matmuls): forward "
                 f"{forward / 1e6:,.1f} M, training step "
                 f"{forward * TRAIN_FLOPS_FACTOR / 1e6:,.1f} M "
                 f"({TRAIN_FLOPS_FACTOR}x).\n")
    rows = []
    for r in results:
        framework = "torch" if r["library"] == "transformers" else \
            r["backend"]
        ceiling = ceilings.get(framework, {}).get("ceiling_gflops")
        row = [label(r), r["library"]]
        for key in ("forward_s", "train_s"):
            gflops = achieved_gflops(args, r, key)
            fraction = None if gflops is None or ceiling is None else \
                gflops / ceiling
            row += [fmt(gflops, ",.1f"), fmt(fraction, ".0%")]
        rows.append(row)
    lines.append(markdown(["backend", "library", "forward GFLOP/s",
                           "of ceiling", "train GFLOP/s", "of ceiling"],
                          rows, 2))
    return "\n".join(lines)


def format_load(args, loads):
    lines = [f"### Loading\n\n`from_preset` of a local preset ("
             f"{describe(args)}), cached weights, a fresh process per row; "
             f"seconds of the call (imports apart), target <= "
             f"{LOAD_TARGET_S:g} s.\n"]
    rows = [[label(r), r["library"], fmt(r["load_s"], ".2f"),
             fmt(r["import_s"], ".2f"),
             "yes" if r["load_s"] <= LOAD_TARGET_S else "no"]
            for r in loads]
    lines.append(markdown(["backend", "library", "load s", "import s",
                           f"<= {LOAD_TARGET_S:g} s"], rows, 2))
    rows = ratio_rows(loads, ("load_s",))
    if rows:
        lines.append("\n" + markdown(["load ratio", "faster by"], rows))
        lines.append("\n(ratio > 1: kzoo loads faster)")
    return "\n".join(lines)


def format_sweep(args, points):
    """`points`: speed rows, each with the "batch" and "seq" it ran."""
    has_device = any("forward_device_peak_mib" in r for r in points)
    memory = "peak RSS MiB" + (" (device MiB)" if has_device else "")
    lines = [f"### Scaling sweep\n\n{describe(args)}; median of "
             f"{args.sweep_steps} timed steps after 1 warm-up. Peak memory: "
             "the worker's peak RSS (VmHWM) at the end of the phase, "
             'since its start ("before model": its peak after the '
             "imports, before the model was built)"
             + ("; device: peak bytes in use" if has_device else "")
             + ". Ratios: kzoo's speed over the peer's (> 1: kzoo faster)."
             + "\n"]

    def mem(r, phase):
        if f"{phase}_peak_rss_mib" not in r:
            return "-"
        text = fmt(r[f"{phase}_peak_rss_mib"])
        device = r.get(f"{phase}_device_peak_mib")
        return text + (f" ({fmt(device)})" if device is not None else "")

    rows = []
    for r in points:
        same = [p for p in points
                if (p["seq"], p["batch"]) == (r["seq"], r["batch"])]
        if r["library"] == "kzoo":
            _, others = peers(same, r["backend"])
            vs = {name: other for name, other in others}
            versus = [fmt(ratio(r, vs[name], key), ".2f")
                      for name in ("keras-hub", "transformers")
                      for key in ("forward_s", "train_s")]
        else:
            versus = ["", "", "", ""]
        rows.append([r["seq"], r["batch"], label(r), r["library"],
                     fmt(tokens_per_s(r["batch"], r["seq"], r["forward_s"])),
                     fmt(tokens_per_s(r["batch"], r["seq"],
                                      r.get("train_s"))),
                     fmt(r.get("baseline_peak_rss_mib")),
                     mem(r, "forward"), mem(r, "train")] + versus)
    lines.append(markdown(
        ["seq", "batch", "backend", "library", "forward tok/s",
         "train tok/s", "before model MiB", f"forward {memory}",
         f"train {memory}",
         "fwd vs keras-hub", "train vs keras-hub", "fwd vs HF",
         "train vs HF"], rows, 4))
    return "\n".join(lines)


def run_speed(jobs, argv, extra=(), title=""):
    results = []
    for backend, library in jobs:
        print(f"running {library} on {backend}{title} ...", flush=True)
        result = run_worker(backend, library, argv, extra=extra)
        results.append(result)
        print(f"  forward {result['forward_s'] * 1000:.1f} ms/step"
              + (f", train {result['train_s'] * 1000:.1f} ms/step"
                 if "train_s" in result else "")
              + f"  ({result['params']:,} parameters, "
              f"{result['wall_s']:.0f} s)", flush=True)
    return results


def run_load(args, argv, backends, libraries):
    root = args.preset_dir or tempfile.mkdtemp(prefix="kzoo_benchmark_")
    extra = ["--preset-dir", root]
    loads = []
    try:
        # Keras presets are backend-independent: each is written once, on
        # the first backend.
        for library in libraries:
            backend = "torch" if library == "transformers" else backends[0]
            print(f"saving a {library} preset into {root} ...", flush=True)
            run_worker(backend, library, argv, "save", extra)
        for backend, library in speed_jobs(backends, libraries):
            runs = [run_worker(backend, library, argv, "load", extra)
                    for _ in range(args.load_runs)]
            best = min(runs, key=lambda r: r["load_s"])
            loads.append(best)
            print(f"  {library} on {backend}: from_preset "
                  f"{best['load_s']:.2f} s (imports {best['import_s']:.2f} "
                  f"s)", flush=True)
    finally:
        if not args.preset_dir:
            shutil.rmtree(root, ignore_errors=True)
    return loads


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    if args.worker:
        return worker(args)
    sections = sections_of(args)
    backends = [b for b in args.backends.split(",") if b]
    libraries = [lib for lib in args.libraries.split(",") if lib]
    for backend in backends:
        if backend not in BACKENDS:
            raise SystemExit(f"Unknown backend {backend!r}; use {BACKENDS}.")
    for library in libraries:
        if library not in LIBRARIES:
            raise SystemExit(f"Unknown library {library!r}; use "
                             f"{LIBRARIES}.")
    if not backends or not libraries:
        raise SystemExit("Name at least one backend and one library.")

    jobs = speed_jobs(backends, libraries)
    report, output = [], {"args": vars(args)}
    results = []
    if "speed" in sections or "ceiling" in sections:
        results = run_speed(jobs, argv)
        output["results"] = results
        if "speed" in sections:
            report.append(format_speed(args, results))
    if "ceiling" in sections:
        frameworks = list(dict.fromkeys(
            "torch" if lib == "transformers" else b for b, lib in jobs))
        ceilings = {}
        for backend in frameworks:
            print(f"timing {backend}'s matmul ...", flush=True)
            ceilings[backend] = run_worker(backend, "matmul", argv, "matmul")
        output["ceilings"] = ceilings
        report.append(format_ceiling(args, ceilings, results))
    if "load" in sections:
        output["loads"] = run_load(args, argv, backends, libraries)
        report.append(format_load(args, output["loads"]))
    if "sweep" in sections:
        points = []
        for seq in args.sweep_seqs:
            for batch in args.sweep_batches:
                extra = ["--seq", str(seq), "--batch", str(batch), "--steps",
                         str(args.sweep_steps), "--warmup", "1"]
                for result in run_speed(jobs, argv, extra,
                                        f" (seq {seq}, batch {batch})"):
                    points.append({**result, "seq": seq, "batch": batch})
        output["sweep"] = points
        report.append(format_sweep(args, points))
    print("\n" + "\n\n".join(report))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(output, f, indent=2)


if __name__ == "__main__":
    main()
