"""The options of a pretraining run, from a config file and the command line.

Every option `kzoo.pretraining.pretrain` takes can sit in a config file
(JSON, TOML through the standard library's `tomllib`, or YAML when PyYAML
is installed); options given on the command line (or as arguments) win.
Options are checked here, once, with the file or flag named in the error.

Which options a checkpoint must share with the run that resumes it
(`IDENTITY`): everything that changes what is trained on or how (the
model, objective, batch, schedule, seed, dtype). Where checkpoints go,
how many are kept, evaluation and logging may change between runs.
"""

import json
import math
import re
from pathlib import Path

from kzoo.pretraining.errors import PretrainingError  # noqa: F401 (re-exported)

# name: (default, type, help). `None` defaults mean "not set".
OPTIONS = {
    "corpus": (None, list, "a prepared corpus and its weight in the mixture, "
               "PATH[:WEIGHT][:epochs=N] (weight 1 when left out); repeat "
               "it to mix corpora, e.g. --corpus books:0.3:epochs=4 "
               "--corpus web:0.7; epochs=N caps the times a corpus is gone "
               "through (it then leaves the mixture, the others' weights "
               "renormalised); in a config file a list of such strings"),
    "objective": (None, str, "the pretraining objective (default: the "
                  "family's own: mlm_nsp for BERT, mlm_sop for ALBERT, rtd for "
                  "ELECTRA, ...)"),
    "objective_options": ({}, dict, "the objective's own options (config "
                          "file only), e.g. {\"masking\": \"whole_word\"}"),
    "from_scratch": (False, bool, "start from random weights (the preset's "
                     "architecture and tokenizer only)"),
    "max_steps": (None, int, "optimizer steps to train (required); raise "
                  "it to extend a run"),
    "extend_schedule": (False, bool, "with a raised --max-steps on a run "
                        "whose schedule decays (linear, cosine, one_cycle): "
                        "stretch the decay to the new last step"),
    "batch_size": (32, int, "examples per batch (per optimizer step: "
                   "batch size x gradient accumulation steps)"),
    "batch_ramp": (None, list, "START:STEPS: the batch grows linearly "
                   "from START examples to the batch size over the first "
                   "STEPS steps, in steps of START (GPT-3, Cramming); "
                   "START must divide the batch size"),
    "sequence_length": (128, int, "tokens per example"),
    "learning_rate": (None, float, "the peak learning rate (default: the "
                      "family's recipe for the model's size)"),
    "warmup_steps": (None, int, "warmup steps (default: the recipe's "
                     "warmup over the original's steps, the same share of a "
                     "shorter run)"),
    "schedule": (None, str, "the learning-rate schedule: linear, cosine, "
                 "inverse_sqrt, one_cycle or constant (default: the "
                 "recipe's)"),
    "optimizer": (None, str, "adamw, lamb, adafactor, adagrad or sgd "
                  "(Keras' own; default: the recipe's)"),
    "beta_1": (None, float, "Adam's/LAMB's beta_1 (default: the recipe's)"),
    "beta_2": (None, float, "Adam's/LAMB's beta_2 (default: the recipe's)"),
    "epsilon": (None, float, "the optimizer's epsilon (default: the "
                "recipe's)"),
    "clip_norm": (None, float, "clip the gradients' global norm at this "
                  "(0: no clipping; default: the recipe's)"),
    "weight_decay": (None, float, "decoupled weight decay, norms and "
                     "biases spared (default: the recipe's)"),
    "mask_rate": (None, float, "the share the objective masks: tokens "
                  "selected for prediction (BERT's 15%), T5's noise "
                  "density, the words BART infills (30%); default: the "
                  "family's recipe; Cramming and 'Should You Mask 15%' "
                  "train BERTs at 0.4"),
    "pretraining_dropout": (None, float, "the backbone's dropout rates "
                            "while pretraining from scratch (Cramming: 0; "
                            "default: the preset's)"),
    "model": ({}, dict, "the architecture over the preset's (config file "
              "only, --from-scratch): the backbone's arguments, e.g. "
              "{\"num_layers\": 4, \"hidden_dim\": 256}"),
    "gradient_accumulation_steps": (1, int, "batches whose gradients are "
                                    "averaged into one optimizer step"),
    "dtype": ("float32", str, "float32 or mixed_bfloat16"),
    "eval_every": (None, int, "evaluate on the corpus' validation split "
                   "every this many steps (and at the end)"),
    "eval_batches": (8, int, "batches in the fixed evaluation set"),
    "checkpoint_every": (1000, int, "steps between checkpoints"),
    "keep_checkpoints": (3, int, "checkpoints kept (the newest)"),
    "seed": (0, int, "the seed of the data order, masks and dropout"),
    "draw_groups": (None, int, "row groups whose masks are drawn apart "
                    "(default: the process count); a 1-process run with "
                    "--draw-groups P trains what a P-process run trains"),
    "model_parallel": (1, int, "JAX: devices per model replica, the "
                       "backbone's weights sharded by its layout rules "
                       "(1: data parallel only)"),
    "peak_tflops": (None, float, "the accelerator's peak TFLOP/s, for the "
                    "model FLOPs utilisation (MFU), or auto (known GPUs and "
                    "TPUs); omitted when unset"),
    "overwrite": (False, bool, "replace a run in OUTPUT made with other "
                  "options (its checkpoints are deleted)"),
    "verbose": (1, int, "1: a progress bar; 0: quiet"),
}

# max_steps is not in it: raising it extends a run (kzoo.pretraining.run
# checks it against the run's schedule).
IDENTITY = ("objective", "objective_options", "from_scratch",
            "batch_size", "sequence_length", "learning_rate",
            "warmup_steps", "weight_decay", "gradient_accumulation_steps",
            "dtype", "seed", "optimizer", "schedule", "beta_1", "beta_2",
            "epsilon", "clip_norm", "pretraining_dropout", "model",
            "mask_rate", "batch_ramp")

DTYPES = ("float32", "mixed_bfloat16")
# kzoo.training.OPTIMIZER_ARGUMENTS' and kzoo.pretraining.schedule.SHAPES'
# names (named here so that reading options imports no Keras).
OPTIMIZERS = ("adamw", "lamb", "adafactor", "adagrad", "sgd")
SCHEDULES = ("linear", "cosine", "inverse_sqrt", "one_cycle", "constant")


def read_config_file(path):
    """The options in a JSON, TOML or YAML file (by its ending), as a dict
    with `-` in keys read as `_`."""
    path = Path(path)
    if not path.is_file():
        raise PretrainingError(f"Config file {path} does not exist.")
    suffix = path.suffix.lower()
    try:
        if suffix == ".json":
            data = json.loads(path.read_text(encoding="utf-8"))
        elif suffix == ".toml":
            import tomllib
            with open(path, "rb") as f:
                data = tomllib.load(f)
        elif suffix in (".yaml", ".yml"):
            try:
                import yaml
            except ImportError:
                raise PretrainingError(
                    f"{path} is YAML, which needs PyYAML: `pip install "
                    "pyyaml`, or write the options as JSON or TOML."
                ) from None
            data = yaml.safe_load(path.read_text(encoding="utf-8"))
        else:
            raise PretrainingError(
                f"Config file {path}: name it .json, .toml or .yaml.")
    except PretrainingError:
        raise
    except Exception as error:  # noqa: BLE001 - each parser's own error
        raise PretrainingError(
            f"Config file {path} cannot be read: {error}. Fix its "
            "syntax.") from None
    if not isinstance(data, dict):
        raise PretrainingError(
            f"Config file {path} must hold a table of options, not "
            f"{type(data).__name__}.")
    return {str(key).replace("-", "_"): value for key, value in data.items()}


def resolve_options(given, source="arguments"):
    """`given` (a dict of options) checked and completed with defaults."""
    unknown = sorted(set(given) - set(OPTIONS))
    if unknown:
        raise PretrainingError(
            f"Unknown option(s) in {source}: {', '.join(unknown)}. Options: "
            f"{', '.join(OPTIONS)}.")
    options = {}
    for name, (default, kind, _) in OPTIONS.items():
        value = given.get(name, default)
        if value is not None:
            value = _checked(name, value, kind, source)
        options[name] = value
    if options["max_steps"] is None:
        raise PretrainingError(f"max_steps is required ({source}): how many "
                               "optimizer steps to train.")
    for name in ("max_steps", "batch_size", "sequence_length",
                 "model_parallel",
                 "gradient_accumulation_steps", "checkpoint_every",
                 "keep_checkpoints", "eval_batches"):
        if options[name] < 1:
            raise PretrainingError(
                f"{name} must be at least 1; got {options[name]} ({source}).")
    for name in ("learning_rate", "epsilon", "beta_1", "beta_2"):
        if options[name] is not None and options[name] <= 0:
            raise PretrainingError(f"{name} must be > 0 ({source}).")
    for name in ("beta_1", "beta_2", "pretraining_dropout"):
        if options[name] is not None and not 0 <= options[name] < 1:
            raise PretrainingError(
                f"{name} must be in [0, 1); got {options[name]} ({source}).")
    if options["batch_ramp"] is not None:
        from kzoo.pretraining.batch_ramp import check_ramp
        check_ramp(options["batch_ramp"], options["batch_size"], source)
    if options["mask_rate"] is not None and not 0 < options["mask_rate"] < 1:
        raise PretrainingError(
            f"mask_rate must be between 0 and 1 (a share, e.g. 0.15 or "
            f"0.4); got {options['mask_rate']} ({source}).")
    for name in ("weight_decay", "clip_norm", "warmup_steps"):
        if options[name] is not None and options[name] < 0:
            raise PretrainingError(f"{name} must be >= 0 ({source}).")
    for name, choices in (("optimizer", OPTIMIZERS), ("schedule", SCHEDULES)):
        if options[name] is not None and options[name] not in choices:
            raise PretrainingError(
                f"{name} {options[name]!r} ({source}): pick one of "
                f"{', '.join(choices)}.")
    peak = options["peak_tflops"]
    if peak is not None and peak != "auto" and not (
            isinstance(peak, float) and peak > 0):
        raise PretrainingError(
            f"peak_tflops must be a number > 0 or auto; got {peak!r} "
            f"({source}).")
    if options["eval_every"] is not None and options["eval_every"] < 1:
        raise PretrainingError(f"eval_every must be at least 1 ({source}).")
    if options["warmup_steps"] is not None and \
            options["warmup_steps"] >= options["max_steps"]:
        raise PretrainingError(
            f"warmup_steps ({options['warmup_steps']}) must be below "
            f"max_steps ({options['max_steps']}) ({source}).")
    if options["dtype"] not in DTYPES:
        raise PretrainingError(
            f"dtype {options['dtype']!r} ({source}): pick one of "
            f"{', '.join(DTYPES)}.")
    return options


def corpus_entries(value, source="arguments"):
    """Corpora, their weights and epoch caps -> `[[path, weight, epochs],
    ...]` (paths as strings, weights as floats, `epochs` an int or None
    for no cap, in the order given).

    `value`: a folder, a string `"PATH[:WEIGHT][:epochs=N]"` (the weight
    after the last colon, when it reads as a number; 1 when left out), or
    a list of those, of `[path, weight]` pairs or `[path, weight,
    epochs]` triples, or of `{"path", "weight", "epochs"}` tables. A
    weight must be a finite number > 0, a cap an integer >= 1 (the times
    the corpus may be gone through: `kzoo.pretraining.streams.mixture`),
    a cap needs a mixture, and no corpus may be listed twice; each error
    names the corpus.
    """
    if isinstance(value, (str, Path)):
        value = [value]
    if not isinstance(value, (list, tuple)) or not value:
        raise PretrainingError(
            f"corpus ({source}) must be a corpus folder or a list of "
            f"PATH[:WEIGHT][:epochs=N] strings; got {value!r}.")
    entries = []
    for item in value:
        if isinstance(item, dict) and set(item) <= {"path", "weight",
                                                    "epochs"} and \
                "path" in item:
            path, weight, epochs = (item["path"], item.get("weight", 1.0),
                                    item.get("epochs"))
        elif isinstance(item, (list, tuple)) and len(item) in (2, 3) and \
                not isinstance(item[1], str):
            path, weight, epochs = (*item, None)[:3]
        elif isinstance(item, (str, Path)):
            path, weight, epochs = _split_spec(str(item), source)
        else:
            raise PretrainingError(
                f"corpus ({source}): {item!r} is not PATH[:WEIGHT]"
                "[:epochs=N], [PATH, WEIGHT] or {path = ..., weight = ..., "
                "epochs = ...}.")
        path = str(path)
        if isinstance(weight, bool) or not isinstance(weight, (int, float)) \
                or not math.isfinite(weight) or weight <= 0:
            raise PretrainingError(
                f"Corpus {path} ({source}): its weight must be a number > 0; "
                f"got {weight!r}. Give every corpus a positive weight (e.g. "
                f"--corpus {path}:0.3), or leave it out of the mixture.")
        if epochs is not None and (isinstance(epochs, bool) or
                                   not isinstance(epochs, int) or epochs < 1):
            raise PretrainingError(
                f"Corpus {path} ({source}): its epoch cap must be a whole "
                f"number >= 1 (the times it may be gone through); got "
                f"{epochs!r}. Give e.g. --corpus {path}:{weight:g}:epochs=4, "
                "or no cap.")
        if any(path == other[0] for other in entries):
            raise PretrainingError(
                f"Corpus {path} ({source}) is listed twice; list each corpus "
                "once, with the weight it should have.")
        entries.append([path, float(weight), epochs])
    if len(entries) == 1 and entries[0][2] is not None:
        raise PretrainingError(
            f"Corpus {entries[0][0]} ({source}): an epoch cap applies to a "
            "corpus of a mixture (it leaves the mixture when it reaches "
            "it); one corpus goes through as many epochs as --max-steps "
            "takes. Drop the cap, or mix it with another corpus.")
    return entries


def _split_spec(text, source):
    """`"PATH[:WEIGHT][:epochs=N]"` -> `(PATH, weight, epochs)`: the cap
    when the last part reads `epochs=...` (any other `NAME=` there is
    refused), the weight when the part before it reads as a number
    (`s3://bucket/x` and `books` have none: 1)."""
    spec, option, epochs = text, None, None
    path, colon, tail = text.rpartition(":")
    if colon and path and re.fullmatch(r"[A-Za-z_]+=.*", tail):
        option, given = tail.split("=", 1)
        text = path
        try:
            epochs = int(given)
        except ValueError:
            epochs = given  # refused by corpus_entries, naming the corpus
    weight = 1.0
    path, colon, tail = text.rpartition(":")
    if colon and path:
        try:
            text, weight = path, float(tail)
        except ValueError:
            pass
    if option not in (None, "epochs"):
        raise PretrainingError(
            f"Corpus {text} ({source}): unknown option {option}= in "
            f"{spec!r}; a corpus takes PATH[:WEIGHT][:epochs=N].")
    return text, weight, epochs


def run_corpus(corpus, options, source="arguments"):
    """The run's corpora, `[[path, weight], ...]`: the `corpus` argument
    (the command's CORPUS) or the `corpus` option (`--corpus`, the config
    file), not both."""
    given = options.get("corpus")
    if corpus is not None and given:
        raise PretrainingError(
            f"Two corpora given: CORPUS {corpus} and the corpus option "
            f"({source}). Give one corpus as CORPUS, or every corpus of a "
            "mixture with --corpus PATH:WEIGHT.")
    if corpus is None and not given:
        raise PretrainingError(
            "No corpus: give a prepared corpus as CORPUS, or a mixture with "
            "--corpus PATH:WEIGHT (repeated).")
    return corpus_entries(corpus if corpus is not None else given,
                          source)


def _checked(name, value, kind, source):
    if name == "peak_tflops" and value == "auto":
        return value
    if name == "corpus":
        return corpus_entries(value, source)
    if name == "batch_ramp":
        from kzoo.pretraining.batch_ramp import parse_ramp
        return parse_ramp(value, source)
    if kind is float and isinstance(value, int) and \
            not isinstance(value, bool):
        return float(value)
    if kind is int and isinstance(value, bool):
        value = str(value)
    if not isinstance(value, kind):
        raise PretrainingError(
            f"Option {name} ({source}) must be {kind.__name__}; got "
            f"{value!r}.")
    return value


def identity(options):
    """What a checkpoint and the run resuming it must share. A run
    without a batch ramp leaves it out, as checkpoints made before the
    option do: they resume, and a ramp added to them is refused."""
    return {name: options[name] for name in IDENTITY
            if not (name == "batch_ramp" and options[name] is None)}
