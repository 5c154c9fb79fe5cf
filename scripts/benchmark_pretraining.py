"""Benchmarks of pretraining at scale (issue 32), one function per section.

    python scripts/benchmark_pretraining.py prepare            # ~50 MB
    python scripts/benchmark_pretraining.py prepare --megabytes 200
    python scripts/benchmark_pretraining.py memory --sizes 100 2000

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


SECTIONS = {"prepare": section_prepare, "memory": section_memory}


def main(argv=None):
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
    args = parser.parse_args(argv)
    for section in args.sections:
        SECTIONS[section](args)


if __name__ == "__main__":
    main()
