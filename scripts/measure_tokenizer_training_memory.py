"""Peak memory (RSS) of `kzoo train-tokenizer` against corpus size.

    python scripts/measure_tokenizer_training_memory.py --megabytes 10 100 \
        --family bert albert

Writes the bundled Austen paragraphs, shuffled and repeated, as a text
file of the largest size asked (English word frequencies; a bounded
number of distinct words), takes each smaller size as its first bytes,
trains each family's vocabulary on each in a fresh process, and prints
that process' peak RSS (`ru_maxrss`, TensorFlow's import included) and
training time. Peak memory should not grow with the size: the
`tokenizers` trainers keep one count per distinct word, SentencePiece
its sample of `--max-sentences` sentences.
"""

import argparse
import random
import subprocess
import sys
import tempfile
from pathlib import Path

CHILD = """
import resource, sys, time
from kzoo.tokenizer_training import train_tokenizer
started = time.perf_counter()
train_tokenizer(sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]),
                max_sentences=int(sys.argv[5]))
peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
print(f"peak RSS {peak:,.0f} MiB, {time.perf_counter() - started:,.0f} s")
"""


def write_corpus(path, megabytes, seed=0):
    """Austen's paragraphs, shuffled anew each round, to `megabytes`."""
    from kzoo import datasets
    paragraphs = [p for novel in datasets.AUSTEN_NOVELS
                  for p in datasets.austen_paragraphs(novel)]
    rng = random.Random(seed)
    target, written = megabytes * 1_000_000, 0
    with open(path, "w", encoding="utf-8") as f:
        while written < target:
            rng.shuffle(paragraphs)
            block = "".join(p + "\n\n" for p in paragraphs)
            block = block[:target - written]
            f.write(block)
            written += len(block)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--megabytes", type=int, nargs="+", default=[10, 100])
    parser.add_argument("--family", nargs="+", default=["bert"])
    parser.add_argument("--vocab-size", type=int, default=8000)
    parser.add_argument("--max-sentences", type=int, default=100_000)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        write_corpus(tmp / "all.txt", max(args.megabytes))
        for megabytes in sorted(args.megabytes):
            corpus = tmp / f"{megabytes}mb.txt"
            with open(tmp / "all.txt", "rb") as source:
                corpus.write_bytes(source.read(megabytes * 1_000_000))
            for family in args.family:
                out = subprocess.run(
                    [sys.executable, "-c", CHILD, family, str(corpus),
                     str(tmp / f"out_{family}_{megabytes}"),
                     str(args.vocab_size), str(args.max_sentences)],
                    check=True, capture_output=True, text=True).stdout
                print(f"{megabytes:>5} MB  {family:<10} {out.strip()}",
                      flush=True)


if __name__ == "__main__":
    main()
