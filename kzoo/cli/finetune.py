"""`kzoo finetune PRESET DATA OUT`: fine-tune the preset's family text
classifier on labelled text and save it as a preset (`kzoo classify OUT`
then uses it).

DATA is a CSV file with a header naming `text` and `label` columns, or
JSON lines with `text` and `label` keys. Labels may be any strings (or
numbers); the saved preset keeps their names. A share of the examples
(`--validation-split`) is held out and scored against the majority-class
baseline: always the training split's most common label (the best
constant predictor learnt from the training data), scored on the held-out
examples.
"""

import csv
import json
from pathlib import Path

from kzoo.cli.inputs import CommandError


def add_arguments(parser):
    parser.add_argument("preset", help="the encoder to start from (a name "
                        "or folder)")
    parser.add_argument("data", help="a .csv (text,label header) or .jsonl "
                        "file of labelled texts")
    parser.add_argument("output", help="the preset folder to write")
    parser.add_argument("--epochs", type=int, default=3,
                        help="passes over the training split (default "
                        "%(default)s)")
    parser.add_argument("--batch-size", type=int, default=16,
                        help="examples per step (default %(default)s)")
    parser.add_argument("--learning-rate", type=float, default=5e-5,
                        help="AdamW's learning rate (default %(default)s)")
    parser.add_argument("--sequence-length", type=int, default=128,
                        help="tokens per example; longer texts are cut "
                        "(default %(default)s)")
    parser.add_argument("--validation-split", type=float, default=0.1,
                        help="share of the examples held out and scored "
                        "(default %(default)s; 0: none)")
    parser.add_argument("--seed", type=int, default=0,
                        help="the split's shuffle and the head's initial "
                        "weights (default %(default)s)")
    parser.add_argument("--overwrite", action="store_true",
                        help="replace OUTPUT if it exists")


def check_before_backends(args):
    """The options and the data file, read and checked before Keras and
    the backends load (kzoo.cli): a mistake is reported at once, not after
    seconds of start-up."""
    output = Path(args.output)
    if output.exists() and any(output.iterdir()) and not args.overwrite:
        raise CommandError(f"{output} exists; pass --overwrite to replace "
                           "it.")
    if not 0 <= args.validation_split < 1:
        raise CommandError("--validation-split must be in [0, 1); got "
                           f"{args.validation_split}.")
    args.labelled = read_labelled(args.data)
    if len(set(args.labelled[1])) < 2:
        raise CommandError(f"{args.data} has one label "
                           f"({args.labelled[1][0]!r}); a classifier needs "
                           "at least two.")


def read_labelled(path):
    """`(texts, labels)` from a CSV or JSON-lines file, both lists of
    strings; a CommandError naming the line at fault otherwise."""
    path = Path(path)
    if path.suffix not in (".csv", ".jsonl"):
        raise CommandError(f"{path.name}: give a .csv or .jsonl file.")
    try:
        with open(path, encoding="utf-8", newline="") as f:
            rows = list(_rows(f, path))
    except OSError as e:
        raise CommandError(f"cannot read {path}: {e.strerror}.") from None
    except UnicodeDecodeError:
        raise CommandError(f"{path} is not UTF-8 text.") from None
    if not rows:
        raise CommandError(f"{path} holds no labelled text.")
    return [text for text, _ in rows], [label for _, label in rows]


def _rows(f, path):
    if path.suffix == ".csv":
        reader = csv.DictReader(f)
        if not {"text", "label"} <= set(reader.fieldnames or ()):
            raise CommandError(
                f"{path.name}: the first line must name the columns, with "
                f"`text` and `label` among them; got {reader.fieldnames}.")
        for line, row in enumerate(reader, start=2):
            yield _checked(row.get("text"), row.get("label"), path, line)
        return
    for line, raw in enumerate(f, start=1):
        if not raw.strip():
            continue
        try:
            row = json.loads(raw)
        except json.JSONDecodeError as e:
            raise CommandError(f"{path.name} line {line}: not JSON ({e.msg})."
                               ) from None
        if not isinstance(row, dict):
            raise CommandError(f"{path.name} line {line}: expected an object "
                               'with "text" and "label".')
        yield _checked(row.get("text"), row.get("label"), path, line)


def _checked(text, label, path, line):
    if not isinstance(text, str) or not text.strip():
        raise CommandError(f"{path.name} line {line}: no text.")
    if label is None or (isinstance(label, str) and not label.strip()):
        raise CommandError(f"{path.name} line {line}: no label.")
    return text, str(label)


def split(texts, labels, share, seed):
    """A shuffled `(train, validation)` split of the examples."""
    import numpy as np
    order = np.random.default_rng(seed).permutation(len(texts))
    held = int(round(len(texts) * share))
    if share > 0 and (held == 0 or held == len(texts)):
        raise CommandError(f"--validation-split {share} leaves no training "
                           f"or no validation example of {len(texts)}.")
    pick = (lambda ids: ([texts[i] for i in ids],
                         np.array([labels[i] for i in ids])))
    return pick(order[held:]), pick(order[:held])


def run(args):
    import keras
    import numpy as np

    from kzoo.cli.inputs import preset_task
    from kzoo.tasks.task_wiring import SequenceClassifier
    from kzoo.training import default_optimizer
    if getattr(args, "labelled", None) is None:  # run() called directly
        check_before_backends(args)
    output = Path(args.output)
    texts, labels = args.labelled
    names = sorted(set(labels))
    ids = [names.index(label) for label in labels]
    (train_x, train_y), (val_x, val_y) = split(
        texts, ids, args.validation_split, args.seed)
    keras.utils.set_random_seed(args.seed)
    classifier = preset_task(args.preset, SequenceClassifier, "finetune",
                             num_classes=len(names),
                             sequence_length=args.sequence_length)
    classifier.compile(
        optimizer=default_optimizer(learning_rate=args.learning_rate))
    print(f"{len(train_x)} training and {len(val_x)} validation examples, "
          f"{len(names)} labels: {', '.join(names)}")
    classifier.fit(train_x, train_y, batch_size=args.batch_size,
                   epochs=args.epochs)
    if len(val_x):
        predicted = np.argmax(classifier.predict(
            val_x, batch_size=args.batch_size, verbose=0), axis=-1)
        # The baseline may know only what the classifier learnt from: the
        # training labels. (The validation split's own majority would be
        # a constant chosen by looking at the answers.) Ties go to the
        # first label in sorted order, as np.argmax.
        majority = int(np.argmax(np.bincount(train_y,
                                             minlength=len(names))))
        baseline = np.mean(val_y == majority)
        print(f"validation accuracy: {np.mean(predicted == val_y):.1%} "
              f"(majority-class baseline {baseline:.1%}: always "
              f"{names[majority]!r}, the training split's most common "
              f"label)")
    classifier.save_to_preset(output, metadata={"labels": names})
    print(f"saved to {output}; try: kzoo classify {output} \"some text\"")
    return 0
