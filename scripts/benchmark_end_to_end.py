"""End-to-end fine-tuning: kzoo's `fit` on raw strings vs a `transformers`
PyTorch loop, wall time of the whole run.

The step benchmark (scripts/benchmark.py) times one compiled step; a user
waits for tokenization, the input pipeline, compilation and every step.
This script times that whole wait on one recipe:

  - data: `kzoo.datasets.austen_authorship` (which of three Austen novels a
    passage of `--words` words comes from), `--examples` training passages,
    a held-out fifth as many for accuracy;
  - model: the `all_minilm_l6_v2` encoder (6 layers, 384 wide) + dropout +
    a linear head on the pooled output; sequence length 64, batch 32,
    `--epochs` epochs, AdamW (lr 5e-5, weight decay 0.01 except biases and
    LayerNorms, 10% linear warmup then linear decay: kzoo's default
    recipe, copied in the transformers loop, whose AdamW is torch's
    fused one as in transformers' Trainer on torch >= 2.8);
  - kzoo: `BertTextClassifier.from_preset(...).fit(texts, labels)`, raw
    strings in, on each Keras backend;
  - transformers: the same encoder weights exported by
    `kzoo.convert.export_hf` (offline), `AutoTokenizer` +
    `BertForSequenceClassification`, a plain PyTorch loop (tokenize all
    texts once, shuffle, batch, step).

Per row: `fit_s`, the wall time of the whole fit (tokenization included);
`setup_s`, from the call to the first step (tokenization, tf.data, the
train function built); `epoch_s`, each epoch's time (the first holds the
compilation; `compile_s` = first epoch - second epoch, the extra the first
epoch costs); steps/s in the last epoch; held-out accuracy (not timed).
Ratios: transformers' `fit_s` / kzoo's, > 1 where kzoo is faster.

Every (library, backend) row runs in its own subprocess, cold.

    python scripts/benchmark_end_to_end.py                 # all backends
    python scripts/benchmark_end_to_end.py --quick         # ~1-2 minutes
    python scripts/benchmark_end_to_end.py --backends torch --examples 512

Speed is measured here, never asserted in a test.
"""

import argparse
import json
import math
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from benchmark_worker import run_worker  # noqa: E402

BACKENDS = ("jax", "tensorflow", "torch")
LIBRARIES = ("kzoo", "transformers")
# bias and LayerNorm parameters are not decayed, in both libraries (kzoo:
# rank < 2, kzoo.training.weight_decay; transformers: by name below).
HF_NO_DECAY = ("bias", "LayerNorm.weight", "LayerNorm.bias")


def default_options(**overrides):
    """The issue's recipe: a few thousand short passages, sequence length
    64, batch 32, 2 epochs, lr 5e-5, the MiniLM encoder with weights."""
    options = {"backends": list(BACKENDS), "libraries": list(LIBRARIES),
               "preset": "all_minilm_l6_v2", "load_weights": True,
               "examples": 3000, "words": 32, "sequence_length": 64,
               "batch_size": 32, "epochs": 2, "learning_rate": 5e-5,
               "threads": None, "seed": 0}
    unknown = set(overrides) - set(options)
    if unknown:
        raise ValueError(f"unknown benchmark options {sorted(unknown)}")
    options.update(overrides)
    if options["epochs"] < 1 or options["examples"] < options["batch_size"]:
        raise ValueError("need epochs >= 1 and examples >= batch_size; got "
                         f"{options['epochs']} and {options['examples']}.")
    return options


def load_data(options):
    """`(train_texts, train_labels), (test_texts, test_labels), names`:
    `examples` training passages and a quarter as many held out."""
    from kzoo import datasets
    names = ("pride_and_prejudice", "emma", "sense_and_sensibility")
    test_fraction = 0.2
    total = math.ceil(options["examples"] / (1 - test_fraction))
    (train_x, train_y), (test_x, test_y), names = datasets.austen_authorship(
        novels=names, words=options["words"],
        per_novel=math.ceil(total / len(names)),
        test_fraction=test_fraction, seed=options["seed"])
    if len(train_x) < options["examples"]:
        raise ValueError(f"the corpus gives {len(train_x)} training passages "
                         f"of {options['words']} words; asked for "
                         f"{options['examples']}.")
    return ((train_x[:options["examples"]], train_y[:options["examples"]]),
            (test_x, test_y), names)


# ----------------------------------------------------------------------
# Workers (one per subprocess)
# ----------------------------------------------------------------------
def _kzoo_classifier(options, num_classes):
    import kzoo
    return kzoo.BertTextClassifier.from_preset(
        options["preset"], num_classes=num_classes,
        sequence_length=options["sequence_length"],
        load_weights=options["load_weights"])


def _worker_kzoo(options):
    import keras
    import numpy as np

    keras.utils.set_random_seed(options["seed"])
    (train_x, train_y), (test_x, test_y), names = load_data(options)
    classifier = _kzoo_classifier(options, len(names))
    classifier.compile(optimizer=_kzoo_optimizer(options))
    times = {"epoch_start": [], "epoch_end": [], "steps": []}

    class Clock(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            times["epoch_start"].append(time.perf_counter())
            times["steps"].append([])

        def on_train_batch_end(self, batch, logs=None):
            times["steps"][-1].append(time.perf_counter())

        def on_epoch_end(self, epoch, logs=None):
            times["epoch_end"].append(time.perf_counter())

    start = time.perf_counter()
    classifier.fit(train_x, train_y, batch_size=options["batch_size"],
                   epochs=options["epochs"], callbacks=[Clock()], verbose=0)
    fit_s = time.perf_counter() - start
    logits = classifier.predict(test_x, batch_size=64, verbose=0)
    accuracy = float(np.mean(np.argmax(logits, axis=-1) == test_y))
    return _row(start, fit_s, times, accuracy)


def _kzoo_optimizer(options):
    from kzoo import training
    return training.default_optimizer(learning_rate=options["learning_rate"])


def _worker_transformers(options):
    import numpy as np
    import torch
    import transformers

    (train_x, train_y), (test_x, test_y), names = load_data(options)
    with tempfile.TemporaryDirectory() as folder:
        _export_encoder(options, len(names), folder)
        torch.manual_seed(options["seed"])
        tokenizer = transformers.AutoTokenizer.from_pretrained(folder)
        model = transformers.BertForSequenceClassification.from_pretrained(
            folder, num_labels=len(names))
    steps_per_epoch = math.ceil(len(train_x) / options["batch_size"])
    total_steps = steps_per_epoch * options["epochs"]
    decay = [p for n, p in model.named_parameters()
             if not any(part in n for part in HF_NO_DECAY)]
    no_decay = [p for n, p in model.named_parameters()
                if any(part in n for part in HF_NO_DECAY)]
    optimizer = torch.optim.AdamW(
        [{"params": decay, "weight_decay": 0.01},
         {"params": no_decay, "weight_decay": 0.0}],
        lr=options["learning_rate"], fused=True)   # the Trainer's default
    schedule = transformers.get_linear_schedule_with_warmup(
        optimizer, int(0.1 * total_steps), total_steps)
    generator = torch.Generator().manual_seed(options["seed"])
    times = {"epoch_start": [], "epoch_end": [], "steps": []}

    def encode(texts):
        return tokenizer(list(texts), padding="max_length", truncation=True,
                         max_length=options["sequence_length"],
                         return_tensors="pt")

    start = time.perf_counter()
    encoded = encode(train_x)
    labels = torch.as_tensor(np.asarray(train_y), dtype=torch.long)
    model.train()
    for _ in range(options["epochs"]):
        times["epoch_start"].append(time.perf_counter())
        times["steps"].append([])
        order = torch.randperm(len(train_x), generator=generator)
        for first in range(0, len(train_x), options["batch_size"]):
            index = order[first:first + options["batch_size"]]
            batch = {k: v[index] for k, v in encoded.items()}
            loss = model(**batch, labels=labels[index]).loss
            loss.backward()
            optimizer.step()
            schedule.step()
            optimizer.zero_grad(set_to_none=True)
            times["steps"][-1].append(time.perf_counter())
        times["epoch_end"].append(time.perf_counter())
    fit_s = time.perf_counter() - start

    model.eval()
    predictions = []
    test = encode(test_x)
    with torch.no_grad():
        for first in range(0, len(test_x), 64):
            batch = {k: v[first:first + 64] for k, v in test.items()}
            predictions.append(model(**batch).logits.argmax(-1).numpy())
    accuracy = float(np.mean(np.concatenate(predictions) == test_y))
    return _row(start, fit_s, times, accuracy)


def _export_encoder(options, num_classes, folder):
    """The preset's encoder and tokenizer as a Hugging Face folder: the
    transformers loop starts from the weights kzoo starts from."""
    import keras
    from kzoo import convert
    keras.utils.set_random_seed(options["seed"])
    classifier = _kzoo_classifier(options, num_classes)
    convert.export_hf(classifier.backbone, folder,
                      tokenizer=classifier.preprocessor.tokenizer,
                      verbose=False, overwrite=True)


def _row(start, fit_s, times, accuracy):
    """The measurements of one run from its clock readings."""
    epoch_s = [end - begin for begin, end in zip(times["epoch_start"],
                                                 times["epoch_end"])]
    last = times["steps"][-1]
    # Steps/s in the last epoch, between its first and last step (the
    # first step of an epoch can wait on a fresh iterator).
    steps_per_s = ((len(last) - 1) / (last[-1] - last[0])
                   if len(last) > 1 else float("nan"))
    return {"fit_s": fit_s, "setup_s": times["epoch_start"][0] - start,
            "epoch_s": epoch_s,
            "first_step_s": times["steps"][0][0] - times["epoch_start"][0],
            "compile_s": (epoch_s[0] - epoch_s[1]
                          if len(epoch_s) > 1 else float("nan")),
            "steps_per_s": steps_per_s,
            "steps": sum(len(s) for s in times["steps"]),
            "accuracy": accuracy}


WORKERS = {"kzoo": _worker_kzoo, "transformers": _worker_transformers}


def worker(library, options):
    uses_torch = (library == "transformers"
                  or os.environ.get("KERAS_BACKEND") == "torch")
    if options.get("threads") and uses_torch:
        import torch
        torch.set_num_threads(int(options["threads"]))
    return WORKERS[library](options)


# ----------------------------------------------------------------------
# The parent: one subprocess per row
# ----------------------------------------------------------------------
def default_rows(backends, libraries=LIBRARIES):
    rows = [("kzoo", backend) for backend in backends if "kzoo" in libraries]
    if "transformers" in libraries:
        rows.append(("transformers", "torch"))
    return rows


def run_one(library, backend, options, timeout=3600):
    row = run_worker(__file__, library, backend, options, timeout)
    return row


def run(options, rows=None, verbose=True):
    rows = rows or default_rows(options["backends"], options["libraries"])
    results = []
    for library, backend in rows:
        if verbose:
            print(f"  {library} on {backend} ...", file=sys.stderr, flush=True)
        row = run_one(library, backend, options)
        row.update(library=library, backend=backend)
        if verbose:
            print("    " + (f"failed: {row['error']}" if "error" in row else
                            f"fit {row['fit_s']:.1f}s, accuracy "
                            f"{row['accuracy']:.3f}"),
                  file=sys.stderr, flush=True)
        results.append(row)
    return results


def _describe(options):
    return (f"{options['preset']} + linear head, fit on raw strings: "
            f"{options['examples']} Austen passages of {options['words']} "
            f"words, sequence length {options['sequence_length']}, batch "
            f"{options['batch_size']}, {options['epochs']} epochs, AdamW "
            f"{options['learning_rate']:g} (warmup 10%, linear decay)"
            + (f"; {options['threads']} compute thread(s)"
               if options.get("threads") else ""))


def format_table(results, options=None):
    """One line per row; `vs transformers` is transformers' fit time over
    the row's (> 1: the row is faster)."""
    reference = next((row["fit_s"] for row in results
                      if row["library"] == "transformers"
                      and "fit_s" in row), None)
    lines = [_describe(options)] if options else []
    header = (f"{'library':<13} {'backend':<11} {'fit s':>7} {'setup s':>8} "
              f"{'epoch 1 s':>10} {'epoch 2 s':>10} {'compile s':>10} "
              f"{'steps/s':>8} {'accuracy':>9} {'vs transformers':>16}")
    lines += [header, "-" * len(header)]
    for row in results:
        label = f"{row['library']:<13} {row['backend']:<11}"
        if "error" in row:
            lines.append(f"{label} failed: {row['error'][:80]}")
            continue
        epochs = row["epoch_s"] + [float("nan")]
        versus = (f"{reference / row['fit_s']:.2f}x" if reference else "")
        lines.append(
            f"{label} {row['fit_s']:>7.1f} {row['setup_s']:>8.1f} "
            f"{epochs[0]:>10.1f} {epochs[1]:>10.1f} "
            f"{row['compile_s']:>10.1f} {row['steps_per_s']:>8.2f} "
            f"{row['accuracy']:>9.3f} {versus:>16}")
    lines.append("(compile s: epoch 1 - epoch 2, what the first epoch costs "
                 "beyond a warm one; steps/s: the last epoch)")
    return "\n".join(lines)


def parse_args(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    defaults = default_options()
    parser.add_argument("--backends", nargs="+", default=list(BACKENDS),
                        choices=BACKENDS)
    parser.add_argument("--libraries", nargs="+", default=list(LIBRARIES),
                        choices=LIBRARIES)
    parser.add_argument("--examples", type=int, default=defaults["examples"],
                        help="training passages")
    parser.add_argument("--epochs", type=int, default=defaults["epochs"])
    parser.add_argument("--words", type=int, default=defaults["words"],
                        help="words per passage")
    parser.add_argument("--batch-size", type=int,
                        default=defaults["batch_size"])
    parser.add_argument("--sequence-length", type=int,
                        default=defaults["sequence_length"])
    parser.add_argument("--learning-rate", type=float,
                        default=defaults["learning_rate"])
    parser.add_argument("--preset", default=defaults["preset"])
    parser.add_argument("--threads", type=int, default=None,
                        help="compute threads for every row (default: each "
                             "library's own choice)")
    parser.add_argument("--quick", action="store_true",
                        help="320 examples (~1-2 minutes for every row)")
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
    options = default_options(
        backends=args.backends, libraries=args.libraries, preset=args.preset,
        examples=320 if args.quick else args.examples, words=args.words,
        sequence_length=args.sequence_length, batch_size=args.batch_size,
        epochs=args.epochs, learning_rate=args.learning_rate,
        threads=args.threads)
    results = run(options)
    print(format_table(results, options))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"options": options, "results": results}, f, indent=2)
    return 0


if __name__ == "__main__":
    sys.exit(main())
