"""Benchmarks of pretraining at scale (issue 32), one function per section.

    python scripts/benchmark_pretraining.py prepare            # ~50 MB
    python scripts/benchmark_pretraining.py prepare --megabytes 200
    python scripts/benchmark_pretraining.py memory --sizes 100 2000
    python scripts/benchmark_pretraining.py pipeline           # objectives
    python scripts/benchmark_pretraining.py overhead --backends jax torch
    python scripts/benchmark_pretraining.py shards long-document
    python scripts/benchmark_pretraining.py one-file --megabytes 500
    python scripts/benchmark_pretraining.py speed --backends torch tensorflow jax
    KERAS_BACKEND=torch python scripts/benchmark_pretraining.py s3-round-trip

Sections:
- `prepare`: `kzoo.corpus.prepare_corpus` MB/s on the bundled Austen
  novels repeated to `--megabytes` (files of one copy each, documents
  between blank lines) with 1 and 2 processes, against Hugging Face
  `datasets` (`load_dataset("text", sample_by="paragraph")` then
  `Dataset.map` with `transformers`' `BertTokenizerFast` on the same
  vocabulary, batched, 1 and 2 processes). Wall time from the files to
  the tokenized result on disk, process start included. Not quite the
  same work: kzoo also splits sentences and writes shards with boundaries.
- `memory`: peak RSS of `prepare_corpus` (one process, in a child) per
  corpus size in MB: memory must not grow with the corpus.

- `pipeline`: pipeline-only tokens/s of each registered objective's
  stream (`stream.batch(i)` in a loop, `--batch-size` x
  `--sequence-length`, on a corpus of the novels prepared with that
  family's tokenizer), against the tokens/s one MLM train step of
  `--step-preset` (BERT-base by default, random weights, batch
  `--step-batch`) consumes here; the ratio's goal is >= 3.
- `overhead`: per backend (each in a child process), `pretrain` tokens/s
  of `--overhead-preset` with the real pipeline against the same run fed
  in-memory batches of the same shapes (made once by the stream, then
  repeated), `--overhead-pairs` alternated pairs of runs, the fastest of
  each kind kept; the overhead's goal is <= 5%.

- `shards`: sizes beyond one machine, simulated (issue 47 item 3): in a
  child process limited to `--open-files` open files (`ulimit -n`),
  `prepare_corpus` writes one file of short documents into
  `--shard-count` shards (`--shard-tokens 8`: a document a shard), then
  a child under the same limit opens the corpus (start-up time) and
  streams one epoch of it (`RowStream` of tests/corpus/
  test_corpus_at_scale.py: rows packed from the walk's sentences); then
  the same read of synthetic shards written directly (`--shard-counts`,
  no tokenizer), for start-up time, open files and peak RSS against the
  number of shards.
- `long-document`: tokens/s of that stream over one document of each of
  `--document-sentences` sentences (synthetic, 4 ids a sentence), against
  documents of 100 sentences: flat, since any sentence is O(1) away.
- `one-file`: `prepare_corpus` MB/s of one `.txt` file of `--megabytes`
  (the novels repeated, blank lines between documents) on each of
  `--processes`: the file is cut into pieces at document starts, so
  processes share it.

- `speed`: the training step against the machine's limit (issue 50
  item 5). BERT-small's shape (`--speed-preset`), MLM from scratch,
  batch `--batch-size` x `--sequence-length` (32 x 128), the median of
  steps 6-25 (`--speed-steps`, `--speed-skip`): kzoo on each of
  `--backends` against `transformers`' `BertForMaskedLM` + torch's AdamW
  (fused, as its Trainer uses it), in float32 and `mixed_bfloat16`
  (transformers: `torch.autocast` to bfloat16), the same masked batches
  for both (made once by kzoo's stream, cycled; no data feed in the
  timed steps). The ceiling, a 4096x512 @ 512x2048 matmul in float32 and
  bfloat16 (the dtypes of `--speed-precisions`) on each backend, is timed
  in the same run; per row: tokens/s,
  achieved GFLOP/s (`kzoo.pretraining.throughput`'s honest count:
  non-embedding parameters plus attention, the same count for both
  libraries) and its fraction of the machine's ceiling (the fastest
  backend's matmul of that dtype), then the ratios. `--speed-smoke`: a
  tiny model, batch and matmul, 3 steps (the test's mode).

- `s3-round-trip`: the storage round trip (issue 47 item 4) against a
  real S3 API on loopback (moto's server, in this process, as
  tests/pretraining/test_remote_storage.py starts it) and the same on
  local disk, `--round-trip-pairs` alternated pairs, the faster of each
  part kept: `prepare_corpus` of `--round-trip-megabytes` of the novels
  (s3:// text into an s3:// corpus), `pretrain` of bert_tiny's shape from
  scratch (MLM, `--batch-size` x `--sequence-length`) killed right after
  checkpoint `--round-trip-steps` / 2 was committed, its resume to
  `--round-trip-steps` (checkpoints every 2 steps, the last one and the
  preset written to s3://) with kzoo's local cache emptied first (as on
  another machine), and `from_preset` of the preset's URL. The backend
  is KERAS_BACKEND's.

Another section is a function `section_NAME(args)` and a line in SECTIONS.
"""

import argparse
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VOCAB = ROOT / "presets" / "bert_base_en_uncased" / "vocab.txt"


def austen_files(folder, megabytes):
    """Copies of the six novels, one file per copy, until `megabytes`."""
    from kzoo.datasets import AUSTEN_DIR
    text = "\n\n".join(p.read_text(encoding="utf-8")
                       for p in sorted(AUSTEN_DIR.glob("*.txt"))) + "\n"
    size = len(text.encode())
    folder.mkdir(parents=True, exist_ok=True)
    paths = []
    for index in range(max(1, round(megabytes * 1e6 / size))):
        path = folder / f"austen_{index:04d}.txt"
        path.write_text(text, encoding="utf-8")
        paths.append(path)
    return paths


def total_mb(paths):
    return sum(p.stat().st_size for p in paths) / 1e6


def time_kzoo(folder, output, processes, shard_tokens):
    from kzoo.corpus import prepare_corpus
    shutil.rmtree(output, ignore_errors=True)
    start = time.perf_counter()
    summary = prepare_corpus([folder], output, "bert_base_en_uncased",
                             processes=processes, progress=False,
                             shard_tokens=shard_tokens,
                             validation_documents=0)
    return time.perf_counter() - start, summary["tokens"]


def time_datasets(paths, cache, processes):
    import datasets
    from transformers import BertTokenizerFast
    datasets.disable_progress_bars()
    shutil.rmtree(cache, ignore_errors=True)
    tokenizer = BertTokenizerFast(vocab_file=str(VOCAB), do_lower_case=True)
    start = time.perf_counter()
    data = datasets.load_dataset(
        "text", data_files=[str(p) for p in paths], sample_by="paragraph",
        split="train", cache_dir=str(cache))

    def tokenize(batch):
        return tokenizer(batch["text"], add_special_tokens=False,
                         return_attention_mask=False,
                         return_token_type_ids=False)

    tokenized = data.map(tokenize, batched=True, batch_size=1000,
                         num_proc=processes if processes > 1 else None,
                         remove_columns=["text"])
    seconds = time.perf_counter() - start
    tokens = sum(len(ids) for ids in tokenized["input_ids"])
    return seconds, tokens


def section_prepare(args):
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_prepare_"))
    try:
        paths = austen_files(work / "text", args.megabytes)
        mb = total_mb(paths)
        print(f"prepare: {mb:.1f} MB of text in {len(paths)} files "
              f"({os.cpu_count()} CPUs here)")
        rows = []
        for processes in args.processes:
            seconds, tokens = time_kzoo(work / "text", work / "kzoo",
                                        processes, args.shard_tokens)
            rows.append(("kzoo prepare_corpus", processes, seconds, tokens))
            print(f"  {rows[-1][0]:<28} {processes} proc  {seconds:7.1f} s "
                  f"{mb / seconds:7.2f} MB/s  {tokens:,} tokens", flush=True)
        for processes in args.processes:
            seconds, tokens = time_datasets(paths, work / "hf", processes)
            rows.append(("datasets.map BertTokenizerFast", processes,
                         seconds, tokens))
            print(f"  {rows[-1][0]:<28} {processes} proc  {seconds:7.1f} s "
                  f"{mb / seconds:7.2f} MB/s  {tokens:,} tokens", flush=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


MEASURE = textwrap.dedent("""
    import resource, sys
    from kzoo.corpus import prepare_corpus
    prepare_corpus([sys.argv[1]], sys.argv[2], "bert_base_en_uncased",
                   processes=1, progress=False, validation_documents=0)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def section_memory(args):
    """Peak RSS per corpus size: a child process prepares one file of the
    novels repeated (the worst case for memory: one unit, full shards)."""
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_memory_"))
    try:
        rows = []
        for megabytes in args.sizes:
            path = work / "corpus.txt"
            text = "\n\n".join(
                p.read_text(encoding="utf-8") for p in sorted(
                    (ROOT / "kzoo" / "data" / "austen").glob("*.txt")))
            with open(path, "w", encoding="utf-8") as f:
                written = 0
                while written < megabytes * 1e6:
                    f.write(text + "\n\n")
                    written += len(text.encode()) + 2
            start = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-c", MEASURE, str(path), str(work / "out")],
                capture_output=True, text=True, check=True)
            seconds = time.perf_counter() - start
            peak = int(done.stdout.split()[-1]) / 1024
            rows.append((megabytes, peak, seconds))
            print(f"memory: {megabytes:>6} MB corpus  peak RSS {peak:7.0f} "
                  f"MB  ({seconds:.0f} s, {megabytes / seconds:.2f} MB/s)",
                  flush=True)
            shutil.rmtree(work / "out", ignore_errors=True)
        children = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        print(f"memory: largest child peak {children / 1024:.0f} MB")
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


# The preset each objective's pipeline is timed with (a family's small
# one; the stream needs its task only for the preprocessor and shapes).
PIPELINE_PRESETS = {
    "mlm": "bert_tiny_en_uncased", "mlm_nsp": "bert_tiny_en_uncased",
    "mlm_sop": "albert_base_en_uncased",
    "rtd": "electra_small_discriminator_en_uncased",
    "span_corruption": "t5_small_multi", "denoising": "bart_base_en",
    "causal_lm": "gpt2_base_en", "bilm": "elmo_small_en",
    "lm": "awd_lstm_wt103_en"}


def offline_preset(name):
    """`name`, or the test suite's stand-in of it (tests/data/presets: the
    same tokenizer class with a small vocabulary) when the named preset's
    tokenizer files come with its weights, not with kzoo."""
    from kzoo.core.tokenizer import Tokenizer
    try:
        Tokenizer.from_preset(name)
        return name
    except Exception:  # noqa: BLE001 - TokenizerAssetError and kin
        stand_in = ROOT / "tests" / "data" / "presets" / name
        return str(stand_in) if stand_in.is_dir() else name


def novels_folder(work, megabytes):
    folder = work / "text"
    if not folder.exists():
        austen_files(folder, megabytes)
    return folder


def stream_for(objective_name, preset, corpus_folder, batch_size, length):
    import kzoo.pretraining.streams  # noqa: F401 - registers objectives
    from kzoo.corpus import Corpus
    from kzoo.pretraining.objectives import OBJECTIVES
    objective = OBJECTIVES[objective_name]
    task = objective.make_task(preset, load_weights=False,
                               sequence_length=length, **objective.options)
    stream = objective.make_stream(task, Corpus(corpus_folder), batch_size,
                                   0, 0, 1, None, length, **objective.options)
    return task, stream


def section_pipeline(args):
    import kzoo  # noqa: F401
    import keras

    from kzoo.corpus import prepare_corpus
    from kzoo.pretraining.objectives import OBJECTIVES
    import kzoo.pretraining.streams  # noqa: F401
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_pipeline_"))
    size, length = args.batch_size, args.sequence_length
    try:
        text = novels_folder(work, args.pipeline_megabytes)
        rows = {}
        print(f"pipeline: {keras.backend.backend()}, batches of {size} x "
              f"{length}, {args.batches} batches after 2 warm-up ones")
        for name in sorted(OBJECTIVES):
            try:
                preset = offline_preset(PIPELINE_PRESETS.get(name))
                corpus = work / f"corpus_{Path(preset).name}"
                if not corpus.exists():
                    prepare_corpus([text], corpus, preset, progress=False,
                                   validation_documents=0)
                _, stream = stream_for(name, preset, corpus, size, length)
                for index in range(2):
                    stream.batch(index)
                start = time.perf_counter()
                for index in range(2, 2 + args.batches):
                    stream.batch(index)
                seconds = time.perf_counter() - start
            except Exception as error:  # noqa: BLE001 - reported, skipped
                print(f"  {name:<16} {PIPELINE_PRESETS.get(name)}: skipped ({type(error).__name__}"
                      f": {str(error).splitlines()[0][:100]})", flush=True)
                continue
            rows[name] = args.batches * size * length / seconds
            print(f"  {name:<16} {Path(preset).name:<40} {rows[name]:>10,.0f} tokens/s",
                  flush=True)
        step = train_step_tokens_per_second(args)
        print(f"  train step: {args.step_preset} MLM, batch "
              f"{args.step_batch} x {length}: {step:,.0f} tokens/s")
        for name, speed in rows.items():
            print(f"  ratio {name:<16} pipeline / step = {speed / step:6.1f}"
                  f"  (goal >= 3)")
        return rows, step
    finally:
        shutil.rmtree(work, ignore_errors=True)


def train_step_tokens_per_second(args):
    """Tokens/s of `--step-preset`'s MLM train step on one batch, repeated
    (`train_on_batch`: the step alone, no data pipeline)."""
    import keras

    from kzoo.corpus import prepare_corpus
    from kzoo.training import AdamW
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_step_"))
    try:
        text = work / "text"
        text.mkdir()
        from kzoo.datasets import austen_text
        (text / "emma.txt").write_text(austen_text("emma"), encoding="utf-8")
        prepare_corpus([text], work / "corpus", args.step_preset,
                       progress=False, validation_documents=0)
        task, stream = stream_for("mlm", args.step_preset, work / "corpus",
                                  args.step_batch, args.sequence_length)
        task.compile(optimizer=AdamW(learning_rate=1e-4))
        x, y, w = stream.batch(0)
        task.train_on_batch(x, y, sample_weight=w)  # compile / warm up
        start = time.perf_counter()
        for _ in range(args.step_repeats):
            task.train_on_batch(x, y, sample_weight=w)
        seconds = (time.perf_counter() - start) / args.step_repeats
        del keras
        return args.step_batch * args.sequence_length / seconds
    finally:
        shutil.rmtree(work, ignore_errors=True)


OVERHEAD = textwrap.dedent("""
    import json, statistics, sys
    from pathlib import Path
    import kzoo
    import kzoo.pretraining.streams
    from kzoo.pretraining import run as run_module
    preset, corpus, out, steps, batch, length, synthetic = sys.argv[1:8]
    real_stream = run_module.Run._stream

    class InMemory:
        # The stream's first batches made once, then handed out again: the
        # same shapes and values, no pipeline work in the timed steps.
        def __init__(self, stream):
            self.stream = stream
            self.cached = [stream.batch(i) for i in range(4)]
        def batch(self, index):
            return self.cached[index % 4]
        def state_before(self, step):
            # The timed steps never move the real stream: the run's final
            # checkpoint (unused here) gets the position of its start.
            return self.stream.state_before(0)
        def __getattr__(self, name):
            return getattr(self.stream, name)

    def stream(self, *args, **kwargs):
        made = real_stream(self, *args, **kwargs)
        return InMemory(made) if synthetic == "1" else made

    run_module.Run._stream = stream
    run_module.pretrain(preset, corpus, out, objective="mlm",
                        from_scratch=True, max_steps=int(steps),
                        batch_size=int(batch), sequence_length=int(length),
                        checkpoint_every=10 ** 6, verbose=0, overwrite=True)
    records = [json.loads(l) for l in
               (Path(out) / "metrics.jsonl").read_text().splitlines()]
    speeds = [r["tokens_per_second"] for r in records
              if "tokens_per_second" in r][2:]
    print(statistics.median(speeds))
""")


def section_overhead(args):
    from kzoo.corpus import prepare_corpus
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_overhead_"))
    try:
        text = novels_folder(work, args.pipeline_megabytes)
        corpus = work / "corpus"
        prepare_corpus([text], corpus, args.overhead_preset, progress=False,
                       validation_documents=0)
        print(f"overhead: {args.overhead_preset} from scratch, MLM, batch "
              f"{args.batch_size} x {args.sequence_length}, median tokens/s "
              f"of {args.overhead_steps} steps after 2")
        rows = {}
        for backend in args.backends:
            speeds = {}
            # Alternated, so that a change of the machine's load hits both.
            kinds = ("1", "0") * args.overhead_pairs
            for attempt, synthetic in enumerate(kinds):
                # A folder per run: in one folder the second run would
                # resume the first's finished run and train nothing.
                done = subprocess.run(
                    [sys.executable, "-c", OVERHEAD, args.overhead_preset,
                     str(corpus), str(work / f"run_{backend}_{attempt}"),
                     str(args.overhead_steps + 2), str(args.batch_size),
                     str(args.sequence_length), synthetic],
                    capture_output=True, text=True,
                    env={**os.environ, "KERAS_BACKEND": backend,
                         "TF_CPP_MIN_LOG_LEVEL": "3"})
                if done.returncode:
                    print(f"  {backend}: failed: "
                          f"{done.stderr.strip().splitlines()[-1][:200]}")
                    break
                speeds.setdefault(synthetic, []).append(
                    float(done.stdout.split()[-1]))
            else:
                synthetic, real = (max(speeds["1"]), max(speeds["0"]))
                rows[backend] = (real, synthetic)
                print(f"  {backend:<11} real pipeline {real:9,.0f} tokens/s"
                      f"  in-memory {synthetic:9,.0f} tokens/s  overhead "
                      f"{1 - real / synthetic:6.1%}  (goal <= 5%)",
                      flush=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


TESTS_CORPUS = ROOT / "tests" / "corpus"

# A child process under an open-files limit: optionally prepare a corpus,
# then open it and stream one epoch; prints one JSON line.
UNDER_LIMIT = textwrap.dedent("""
    import json, os, resource, sys, time
    limit, folder, text, shard_tokens, tests = sys.argv[1:6]
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (int(limit), hard))
    sys.path.insert(0, tests)
    from test_corpus_at_scale import RowStream
    from kzoo.corpus import Corpus, prepare_corpus
    result = {}
    if text != "-":
        start = time.perf_counter()
        prepare_corpus([text], folder, "bert_base_en_uncased",
                       shard_tokens=int(shard_tokens), processes=1,
                       progress=False, validation_documents=0)
        result["prepare_s"] = time.perf_counter() - start
    start = time.perf_counter()
    corpus = Corpus(folder)
    result["startup_s"] = time.perf_counter() - start
    result["shards"] = len(corpus.shards)
    stream = RowStream(corpus, 64, order_window=4096)
    # One epoch's worth of rows (64 x 16 ids a batch), documents drawn
    # from every shard in the walk's random order.
    steps = max(1, corpus.num_tokens // (64 * 16))
    most_open = 0
    start = time.perf_counter()
    for step in range(steps):
        stream.batch(step)
        most_open = max(most_open, len(os.listdir("/proc/self/fd")))
    result["epoch_s"] = time.perf_counter() - start
    result["tokens_per_s"] = steps * 64 * 16 / result["epoch_s"]
    result["most_open_files"] = most_open
    result["peak_rss_mb"] = resource.getrusage(
        resource.RUSAGE_SELF).ru_maxrss / 1024
    print(json.dumps(result))
""")


def run_under_limit(limit, folder, text="-", shard_tokens=8):
    done = subprocess.run(
        [sys.executable, "-c", UNDER_LIMIT, str(limit), str(folder),
         str(text), str(shard_tokens), str(TESTS_CORPUS)],
        capture_output=True, text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"})
    if done.returncode:
        raise SystemExit(f"shards: the child failed:\n{done.stderr[-3000:]}")
    import json
    return json.loads(done.stdout.strip().splitlines()[-1])


def section_shards(args):
    sys.path.insert(0, str(TESTS_CORPUS))
    from test_corpus_at_scale import synthetic_corpus
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_shards_"))
    try:
        text = work / "short.txt"
        # One short document (~8 tokens) a shard.
        text.write_text("\n\n".join(
            f"Document number {d} is short and plain." for d in
            range(args.shard_count)) + "\n", encoding="utf-8")
        result = run_under_limit(args.open_files, work / "prepared", text)
        print(f"shards: prepared {result['shards']:,} shards under ulimit -n"
              f" {args.open_files} in {result['prepare_s']:.1f} s; start-up "
              f"{result['startup_s'] * 1000:.0f} ms, one epoch "
              f"{result['epoch_s']:.1f} s ({result['tokens_per_s']:,.0f} "
              f"tokens/s), at most {result['most_open_files']} open files, "
              f"peak RSS {result['peak_rss_mb']:.0f} MB", flush=True)
        rows = {"prepared": result}
        for count in args.shard_counts:
            folder = synthetic_corpus(work / f"synthetic_{count}",
                                      [[2]] * count)
            rows[count] = result = run_under_limit(args.open_files, folder)
            print(f"shards: {count:>7,} synthetic shards under ulimit -n "
                  f"{args.open_files}: start-up "
                  f"{result['startup_s'] * 1000:6.0f} ms, epoch "
                  f"{result['epoch_s']:6.1f} s "
                  f"({result['tokens_per_s']:9,.0f} tokens/s), at most "
                  f"{result['most_open_files']} open files, peak RSS "
                  f"{result['peak_rss_mb']:.0f} MB", flush=True)
            shutil.rmtree(folder, ignore_errors=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def section_long_document(args):
    sys.path.insert(0, str(TESTS_CORPUS))
    from test_corpus_at_scale import synthetic_corpus, tokens_per_second
    from kzoo.corpus import Corpus
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_long_"))
    try:
        short = Corpus(synthetic_corpus(work / "short", [[100] * 1000]))
        tokens_per_second(short, 4000)  # warm up
        rows = {100: tokens_per_second(short, args.stream_sentences)}
        print(f"long-document: documents of 100 sentences: "
              f"{rows[100]:,.0f} tokens/s", flush=True)
        for sentences in args.document_sentences:
            corpus = Corpus(synthetic_corpus(work / f"long_{sentences}",
                                             [[sentences]]))
            rows[sentences] = tokens_per_second(
                corpus, min(args.stream_sentences, sentences))
            print(f"long-document: one document of {sentences:>9,} "
                  f"sentences: {rows[sentences]:,.0f} tokens/s "
                  f"({rows[sentences] / rows[100]:.2f}x the short ones')",
                  flush=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


def section_one_file(args):
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_one_file_"))
    try:
        paths = austen_files(work / "copies", args.megabytes)
        text = work / "text"
        text.mkdir()
        with open(text / "one.txt", "wb") as out:
            for path in paths:
                out.write(path.read_bytes())
                out.write(b"\n")
                path.unlink()
        mb = total_mb([text / "one.txt"])
        print(f"one-file: {mb:.1f} MB in one .txt file ({os.cpu_count()} "
              "CPUs here)")
        rows = {}
        for processes in args.processes:
            seconds, tokens = time_kzoo(text, work / "kzoo", processes,
                                        args.shard_tokens)
            rows[processes] = mb / seconds
            print(f"  kzoo prepare_corpus {processes} proc  {seconds:7.1f} s"
                  f"  {mb / seconds:7.2f} MB/s  {tokens:,} tokens",
                  flush=True)
        return rows
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------
# speed: kzoo's training step against transformers and the matmul ceiling
# ----------------------------------------------------------------------
PRECISIONS = ("float32", "mixed_bfloat16")


def speed_shape(args):
    """(preset, batch, length, steps, skip, matmul (m, k, n)) of the run."""
    if args.speed_smoke:
        return ("bert_tiny_en_uncased", 4, 32, 3, 1, (512, 256, 512))
    return (args.speed_preset, args.batch_size, args.sequence_length,
            args.speed_steps, args.speed_skip, (4096, 512, 2048))


def speed_batches(work, preset, batch, length, count, smoke):
    """`count` masked-LM batches of kzoo's stream over Emma (its first
    50 kB in smoke mode), saved to one .npz for every child."""
    import numpy as np

    from kzoo.corpus import prepare_corpus
    from kzoo.datasets import austen_text
    text = work / "text"
    text.mkdir()
    emma = austen_text("emma")
    (text / "emma.txt").write_text(emma[:50_000] if smoke else emma,
                                   encoding="utf-8")
    prepare_corpus([text], work / "corpus", preset, progress=False,
                   validation_documents=0)
    _, stream = stream_for("mlm", preset, work / "corpus", batch, length)
    arrays = {}
    for index in range(count):
        x, y, w = stream.batch(index)
        for key, value in x.items():
            arrays[f"{index}/x/{key}"] = np.asarray(value)
        arrays[f"{index}/y"] = np.asarray(y)
        arrays[f"{index}/w"] = np.asarray(w)
    path = work / "batches.npz"
    np.savez(path, **arrays)
    return path


def load_batches(path):
    import numpy as np
    data = np.load(path)
    batches = {}
    for key in data.files:
        index, kind, *name = key.split("/")
        entry = batches.setdefault(int(index), [{}, None, None])
        if kind == "x":
            entry[0][name[0]] = data[key]
        else:
            entry[1 if kind == "y" else 2] = data[key]
    return [tuple(batches[i]) for i in sorted(batches)]


def ceiling_dtypes(precisions):
    """The matmul dtypes whose ceiling the precisions timed are held to."""
    return [dtype for dtype, precision in (("float32", "float32"),
                                           ("bfloat16", "mixed_bfloat16"))
            if precision in precisions]


def timed_median(step, steps, skip):
    """Median seconds of `step()` over steps skip+1..steps (1-based)."""
    import statistics
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    return statistics.median(seconds[skip:])


def keras_matmul_gflops(shape, dtype, repeats=5):
    """GFLOP/s of this backend's `(m, k) @ (k, n)` matmul in `dtype`
    (median of `repeats` after one warm-up)."""
    import numpy as np
    from keras import ops
    m, k, n = shape
    rng = np.random.default_rng(0)
    a = ops.convert_to_tensor(rng.standard_normal((m, k)), dtype=dtype)
    b = ops.convert_to_tensor(rng.standard_normal((k, n)), dtype=dtype)

    def product():
        ops.convert_to_numpy(ops.sum(ops.matmul(a, b)[:1, :1]))

    return 2 * m * k * n / timed_median(product, repeats + 1, 1) / 1e9


def speed_child_kzoo(spec):
    """One backend's rows: the ceiling, then kzoo's step per precision."""
    import keras

    import kzoo.pretraining.streams  # noqa: F401 - registers objectives
    from kzoo.pretraining import throughput
    from kzoo.pretraining.objectives import OBJECTIVES
    from kzoo.training import AdamW
    batches = load_batches(spec["batches"])
    result = {"ceiling": {dtype: keras_matmul_gflops(spec["matmul"], dtype)
                          for dtype in ceiling_dtypes(spec["precisions"])}}
    objective = OBJECTIVES["mlm"]
    for precision in spec["precisions"]:
        keras.config.set_dtype_policy(precision)
        keras.utils.set_random_seed(0)
        task = objective.make_task(spec["preset"], load_weights=False,
                                   sequence_length=spec["length"],
                                   **objective.options)
        task.compile(optimizer=AdamW(learning_rate=1e-4, weight_decay=0.01))
        count = iter(range(10 ** 9))

        def step():
            x, y, w = batches[next(count) % len(batches)]
            task.train_on_batch(x, y, sample_weight=w)

        seconds = timed_median(step, spec["steps"], spec["skip"])
        shape = throughput.transformer_shape(task.backbone.get_config())
        result[precision] = {
            "seconds": seconds,
            "tokens": throughput.real_tokens(batches[0]),
            "flops_per_token": throughput.flops_per_token(
                throughput.non_embedding_parameters(
                    task.trainable_variables), *shape, spec["length"])}
    keras.config.set_dtype_policy("float32")
    return result


def speed_child_transformers(spec):
    """transformers' BertForMaskedLM of the preset's shape, torch's fused
    AdamW, the same batches (labels -100 but at the masked positions)."""
    import contextlib
    import json

    import numpy as np
    import torch
    from transformers import BertConfig, BertForMaskedLM
    config = json.loads((Path(spec["preset_dir"]) / "config.json")
                        .read_text())["config"]
    hf_config = BertConfig(
        vocab_size=config["vocabulary_size"],
        hidden_size=config["hidden_dim"],
        num_hidden_layers=config["num_layers"],
        num_attention_heads=config["num_heads"],
        intermediate_size=config["intermediate_dim"],
        hidden_act=config["activation"],
        hidden_dropout_prob=config["dropout"],
        attention_probs_dropout_prob=config["attention_dropout"],
        max_position_embeddings=config["max_sequence_length"],
        type_vocab_size=config["num_segments"],
        layer_norm_eps=config["layer_norm_epsilon"])
    inputs = []
    for x, y, w in load_batches(spec["batches"]):
        labels = np.full(x["token_ids"].shape, -100, dtype=np.int64)
        rows, slots = np.nonzero(w)
        labels[rows, x["mask_positions"][rows, slots]] = y[rows, slots]
        segments = x.get("segment_ids", np.zeros_like(x["token_ids"]))
        inputs.append({
            "input_ids": torch.from_numpy(x["token_ids"].astype(np.int64)),
            "attention_mask": torch.from_numpy(
                x["padding_mask"].astype(np.int64)),
            "token_type_ids": torch.from_numpy(segments.astype(np.int64)),
            "labels": torch.from_numpy(labels)})
    m, k, n = spec["matmul"]
    result = {"ceiling": {}}
    for name in ceiling_dtypes(spec["precisions"]):
        dtype = getattr(torch, name)
        a, b = torch.randn(m, k, dtype=dtype), torch.randn(k, n, dtype=dtype)
        result["ceiling"][name] = 2 * m * k * n / timed_median(
            lambda: a @ b, 6, 1) / 1e9
    for precision in spec["precisions"]:
        torch.manual_seed(0)
        model = BertForMaskedLM(hf_config).train()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4,
                                      weight_decay=0.01, fused=True)
        autocast = (torch.autocast("cpu", dtype=torch.bfloat16)
                    if precision == "mixed_bfloat16"
                    else contextlib.nullcontext())
        count = iter(range(10 ** 9))

        def step():
            batch = inputs[next(count) % len(inputs)]
            optimizer.zero_grad(set_to_none=True)
            with autocast:
                loss = model(**batch).loss
            loss.backward()
            optimizer.step()

        result[precision] = {
            "seconds": timed_median(step, spec["steps"], spec["skip"])}
    return result


SPEED_CHILDREN = {"kzoo": speed_child_kzoo,
                  "transformers": speed_child_transformers}


def run_speed_child(library, backend, spec):
    import json
    done = subprocess.run(
        [sys.executable, __file__, "speed-child", library,
         json.dumps(spec)], capture_output=True, text=True,
        env={**os.environ, "KERAS_BACKEND": backend,
             "TF_CPP_MIN_LOG_LEVEL": "3"})
    if done.returncode:
        print(f"  {library} on {backend}: failed: "
              f"{done.stderr.strip()[-1500:]}", flush=True)
        return None
    return json.loads(done.stdout.strip().splitlines()[-1])


def section_speed(args):
    preset, batch, length, steps, skip, matmul = speed_shape(args)
    preset = offline_preset(preset)
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_speed_"))
    try:
        spec = {"preset": preset, "length": length, "steps": steps,
                "skip": skip, "matmul": matmul,
                "precisions": list(args.speed_precisions),
                "preset_dir": str(ROOT / "presets" / Path(preset).name),
                "batches": str(speed_batches(work, preset, batch, length,
                                             4, args.speed_smoke))}
        print(f"speed: {Path(preset).name} MLM from scratch, batch {batch} "
              f"x {length}, median of steps {skip + 1}-{steps}; ceiling "
              f"{matmul[0]}x{matmul[1]} @ {matmul[1]}x{matmul[2]}; load "
              f"average {os.getloadavg()[0]:.1f} at the start", flush=True)
        runs = {("transformers", "torch"): run_speed_child(
            "transformers", "torch", spec)}
        for backend in args.backends:
            runs[("kzoo", backend)] = run_speed_child("kzoo", backend, spec)
        rows = {key: value for key, value in runs.items() if value}
        ceiling = {dtype: max(r["ceiling"][dtype] for r in rows.values())
                   for dtype in ceiling_dtypes(args.speed_precisions)}
        for dtype in ceiling:
            each = ", ".join(f"{library} on {backend} "
                             f"{r['ceiling'][dtype]:,.1f}"
                             for (library, backend), r in rows.items())
            print(f"  ceiling {dtype:<8} {ceiling[dtype]:9,.1f} GFLOP/s "
                  f"(the fastest of: {each})")
        flops = next((r[p]["flops_per_token"] for (lib, _), r in
                      rows.items() if lib == "kzoo"
                      for p in args.speed_precisions), None)
        tokens = batch * length
        table = {}
        print(f"  {'library':<13}{'backend':<11}{'precision':<16}"
              f"{'tokens/s':>10}{'GFLOP/s':>9}{'of ceiling':>12}")
        for (library, backend), result in rows.items():
            for precision in args.speed_precisions:
                speed = tokens / result[precision]["seconds"]
                table[(library, backend, precision)] = speed
                line = (f"  {library:<13}{backend:<11}{precision:<16}"
                        f"{speed:10,.0f}")
                if flops:
                    achieved = speed * flops / 1e9
                    bound = ceiling["float32" if precision == "float32"
                                    else "bfloat16"]
                    line += f"{achieved:9,.1f}{achieved / bound:12.1%}"
                print(line, flush=True)
        reference = {p: table.get(("transformers", "torch", p))
                     for p in args.speed_precisions}
        for (library, backend, precision), speed in table.items():
            if library == "kzoo" and reference[precision]:
                print(f"  ratio kzoo {backend} / transformers torch "
                      f"{precision}: {speed / reference[precision]:.2f}x")
            if library == "kzoo" and precision == "mixed_bfloat16" and \
                    (library, backend, "float32") in table:
                print(f"  ratio kzoo {backend} mixed_bfloat16 / float32: "
                      f"{speed / table[(library, backend, 'float32')]:.2f}x")
        print(f"  load average {os.getloadavg()[0]:.1f} at the end",
              flush=True)
        return table
    finally:
        shutil.rmtree(work, ignore_errors=True)


# ----------------------------------------------------------------------
# s3-round-trip: prepare, pretrain, kill and resume on s3:// against disk
# ----------------------------------------------------------------------
class RoundTripKilled(BaseException):
    """The kill of `s3-round-trip`'s first run, right after a checkpoint
    was written (and, on s3://, committed)."""


def moto_server(cache):
    """A moto S3 server on loopback with dummy credentials, kzoo's cache
    in `cache`; returns the server (stop it) and a bucket's URL."""
    import logging

    import fsspec
    import s3fs
    from moto.server import ThreadedMotoServer
    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # a line a request
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0,
                                verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    os.environ.update(AWS_ACCESS_KEY_ID="benchmark",
                      AWS_SECRET_ACCESS_KEY="benchmark",
                      AWS_DEFAULT_REGION="us-east-1",
                      AWS_SHARED_CREDENTIALS_FILE="/nonexistent",
                      AWS_CONFIG_FILE="/nonexistent",
                      AWS_ENDPOINT_URL=f"http://{host}:{port}",
                      KZOO_CACHE=str(cache))
    s3fs.S3FileSystem.clear_instance_cache()
    fsspec.filesystem("s3").mkdir("kzoo-benchmark")
    return server, "s3://kzoo-benchmark"


def round_trip(preset, text, corpus, run, options, kill_at, fresh_cache):
    """Seconds of each part of the round trip: prepare `text` into
    `corpus`, pretrain into `run` until killed after checkpoint
    `kill_at`, resume to the end (after `fresh_cache()`), load the
    preset."""
    from kzoo.corpus import prepare_corpus
    from kzoo.pretraining import run as run_module
    from kzoo.utils import storage
    import kzoo
    seconds = {}
    start = time.perf_counter()
    prepare_corpus(text, corpus, preset, processes=1, progress=False,
                   validation_documents=0)
    seconds["prepare"] = time.perf_counter() - start
    save = run_module.Run.save_checkpoint

    def save_then_die(self, step, metrics):
        save(self, step, metrics)
        if step == kill_at:
            raise RoundTripKilled()

    run_module.Run.save_checkpoint = save_then_die
    start = time.perf_counter()
    try:
        run_module.pretrain(preset, corpus, run, **options)
        raise SystemExit("s3-round-trip: the run was not killed")
    except RoundTripKilled:
        seconds["pretrain to the kill"] = time.perf_counter() - start
    finally:
        run_module.Run.save_checkpoint = save
    fresh_cache()
    start = time.perf_counter()
    summary = run_module.pretrain(preset, corpus, run, **options)
    seconds["resume to the end"] = time.perf_counter() - start
    if summary["resumed_from"] != kill_at:
        raise SystemExit(f"s3-round-trip: resumed from "
                         f"{summary['resumed_from']}, not {kill_at}")
    fresh_cache()
    start = time.perf_counter()
    kzoo.BertMaskedLM.from_preset(storage.join(str(run), "preset")
                                  if storage.is_url(str(run)) else
                                  str(Path(run) / "preset"))
    seconds["load the preset"] = time.perf_counter() - start
    return seconds


def section_s3_round_trip(args):
    import keras
    work = Path(tempfile.mkdtemp(prefix="kzoo_bench_s3_"))
    server, bucket = moto_server(work / "cache")
    try:
        import fsspec
        paths = austen_files(work / "text", args.round_trip_megabytes)
        mb = total_mb(paths)
        start = time.perf_counter()
        fsspec.filesystem("s3").put(str(work / "text"),
                                    f"{bucket[5:]}/text", recursive=True)
        upload = time.perf_counter() - start
        preset = offline_preset("bert_tiny_en_uncased")
        steps = args.round_trip_steps
        options = dict(objective="mlm", from_scratch=True, max_steps=steps,
                       batch_size=args.batch_size,
                       sequence_length=args.sequence_length,
                       checkpoint_every=2, warmup_steps=1, seed=0,
                       verbose=0)
        print(f"s3-round-trip: {mb:.1f} MB of text ({len(paths)} files; "
              f"uploaded to moto in {upload:.2f} s), {preset} from scratch "
              f"on {keras.backend.backend()}, {steps} steps of "
              f"{args.batch_size} x {args.sequence_length}, checkpoints "
              f"every 2, killed after step {steps // 2}; {os.cpu_count()} "
              "CPUs", flush=True)

        def no_cache():
            shutil.rmtree(work / "cache", ignore_errors=True)

        best = {}
        for pair in range(args.round_trip_pairs):
            for where in ("local", "s3"):
                if where == "local":
                    base = work / f"local_{pair}"
                    parts = (str(work / "text"), str(base / "corpus"),
                             str(base / "run"))
                else:
                    parts = (f"{bucket}/text", f"{bucket}/corpus_{pair}",
                             f"{bucket}/run_{pair}")
                seconds = round_trip(preset, *parts, options, steps // 2,
                                     no_cache)
                for part, value in seconds.items():
                    key = (part, where)
                    best[key] = min(best.get(key, value), value)
                print(f"  pair {pair + 1} {where:5}: " + ", ".join(
                    f"{part} {value:.2f} s" for part, value in
                    seconds.items()), flush=True)
        from kzoo.pretraining.checkpoints import checkpoint_name
        final = work / "local_0" / "run" / "checkpoints" / \
            checkpoint_name(steps)
        sizes = {name: sum(f.stat().st_size for f in folder.rglob("*")
                           if f.is_file()) / 1e6
                 for name, folder in (("checkpoint", final), (
                     "preset", work / "local_0" / "run" / "preset"))}
        print(f"  a checkpoint {sizes['checkpoint']:.1f} MB, the preset "
              f"{sizes['preset']:.1f} MB")
        print(f"  {'part':22} {'local s':>9} {'s3 (moto) s':>12} "
              f"{'s3 / local':>10}")
        for part in ("prepare", "pretrain to the kill",
                     "resume to the end", "load the preset"):
            local, remote = best[(part, "local")], best[(part, "s3")]
            print(f"  {part:22} {local:9.2f} {remote:12.2f} "
                  f"{remote / local:9.2f}x", flush=True)
        return best
    finally:
        server.stop()
        shutil.rmtree(work, ignore_errors=True)


SECTIONS = {"prepare": section_prepare, "memory": section_memory,
            "pipeline": section_pipeline, "overhead": section_overhead,
            "shards": section_shards,
            "long-document": section_long_document,
            "one-file": section_one_file, "speed": section_speed,
            "s3-round-trip": section_s3_round_trip}


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["speed-child"]:
        # A child of `speed`: one library on this process' backend.
        import json
        print(json.dumps(SPEED_CHILDREN[argv[1]](json.loads(argv[2]))))
        return
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("sections", nargs="*", default=["prepare"],
                        choices=sorted(SECTIONS))
    parser.add_argument("--megabytes", type=float, default=50,
                        help="prepare: MB of text")
    parser.add_argument("--processes", type=int, nargs="+", default=[1, 2],
                        help="prepare: process counts to time")
    parser.add_argument("--shard-tokens", type=int, default=1 << 20,
                        help="prepare: tokens per shard (a unit of work "
                        "is about 4 bytes a token of text: 2**20 -> 4 MB)")
    parser.add_argument("--sizes", type=float, nargs="+",
                        default=[100, 2000], help="memory: corpus MBs")
    parser.add_argument("--batch-size", type=int, default=32,
                        help="pipeline/overhead: examples per batch")
    parser.add_argument("--sequence-length", type=int, default=128)
    parser.add_argument("--batches", type=int, default=20,
                        help="pipeline: batches timed per objective")
    parser.add_argument("--pipeline-megabytes", type=float, default=4,
                        help="pipeline/overhead: MB of text in the corpus")
    parser.add_argument("--step-preset", default="bert_base_en_uncased",
                        help="pipeline: the model whose train step is timed")
    parser.add_argument("--step-batch", type=int, default=8)
    parser.add_argument("--step-repeats", type=int, default=3)
    parser.add_argument("--overhead-preset", default="bert_small_en_uncased")
    parser.add_argument("--overhead-steps", type=int, default=8)
    parser.add_argument("--overhead-pairs", type=int, default=2,
                        help="overhead: alternated (in-memory, real) pairs "
                             "of runs per backend")
    parser.add_argument("--shard-count", type=int, default=2000,
                        help="shards: shards prepared under the limit")
    parser.add_argument("--shard-counts", type=int, nargs="+",
                        default=[2000, 20000],
                        help="shards: synthetic shard counts read")
    parser.add_argument("--open-files", type=int, default=256,
                        help="shards: the children's ulimit -n")
    parser.add_argument("--document-sentences", type=int, nargs="+",
                        default=[10 ** 4, 10 ** 5, 10 ** 6],
                        help="long-document: sentences of the one document")
    parser.add_argument("--stream-sentences", type=int, default=64000,
                        help="long-document: sentences streamed per timing")
    parser.add_argument("--backends", nargs="+",
                        default=["jax", "tensorflow", "torch"])
    parser.add_argument("--speed-preset", default="bert_small_en_uncased",
                        help="speed: the shape timed (from scratch)")
    parser.add_argument("--speed-steps", type=int, default=25,
                        help="speed: steps run per library and precision")
    parser.add_argument("--speed-skip", type=int, default=5,
                        help="speed: first steps left out of the median")
    parser.add_argument("--speed-precisions", nargs="+",
                        default=list(PRECISIONS), choices=PRECISIONS)
    parser.add_argument("--speed-smoke", action="store_true",
                        help="speed: a tiny model and matmul, 3 steps")
    parser.add_argument("--round-trip-megabytes", type=float, default=2,
                        help="s3-round-trip: MB of text prepared")
    parser.add_argument("--round-trip-steps", type=int, default=8,
                        help="s3-round-trip: the run's steps (an even "
                        "number; killed after half of them)")
    parser.add_argument("--round-trip-pairs", type=int, default=2,
                        help="s3-round-trip: alternated (local, s3) pairs")
    args = parser.parse_args(argv)
    if args.round_trip_steps < 4 or args.round_trip_steps % 4:
        parser.error("--round-trip-steps must be a multiple of 4 (the kill"
                     " comes after a checkpoint, every 2 steps, halfway)")
    if args.speed_skip >= args.speed_steps:
        parser.error(f"--speed-skip ({args.speed_skip}) must be below "
                     f"--speed-steps ({args.speed_steps})")
    if args.overhead_pairs < 1:
        parser.error(f"--overhead-pairs must be at least 1, got "
                     f"{args.overhead_pairs}")
    for section in args.sections:
        SECTIONS[section](args)


if __name__ == "__main__":
    main()
