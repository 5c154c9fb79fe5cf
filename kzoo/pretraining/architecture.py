"""The architecture a from-scratch run builds: the preset's, with the
config file's `[model]` table over it (and `--pretraining-dropout`).

    [model]
    num_layers = 4
    hidden_dim = 256
    num_heads = 4
    intermediate_dim = 1024
    max_sequence_length = 128
    # vocabulary_size: the preset's (a `kzoo train-tokenizer` preset's is
    # its vocabulary's); at least the tokenizer's

The keys are the backbone's own constructor arguments (`config.json`'s
names), checked before anything is built: an unknown name, a hidden size
that its heads do not divide (the backbone's own argument rules), fewer
positions than `--sequence-length`, or a vocabulary smaller than the
tokenizer's is one line naming the table and what to do.

How the objective builds it: every objective makes its task with
`from_preset(preset, load_weights=False, ...)`, so the run hands it a
copy of the preset folder (its tokenizer and files, no weights) whose
config.json holds the new architecture, made in a temporary folder for
the run's life. The run's identity records the table, not the copy.
"""

import json
import shutil
from pathlib import Path

from kzoo.pretraining.config import PretrainingError

# The backbone arguments `--pretraining-dropout` sets, where it has them.
DROPOUT_ARGUMENTS = ("dropout", "attention_dropout", "activation_dropout")


def backbone_overrides(backbone_cls, preset_config, options):
    """The backbone config entries the run changes: the `[model]` table
    and the dropout rates of `--pretraining-dropout`."""
    overrides = dict(options["model"])
    dropout = options["pretraining_dropout"]
    if dropout is not None:
        names = [n for n in DROPOUT_ARGUMENTS if n in preset_config]
        if not names:
            own = sorted(k for k in preset_config if "dropout" in k)
            raise PretrainingError(
                f"--pretraining-dropout: {backbone_cls.__name__} has no "
                "single dropout rate; set its dropouts in the config file's "
                f"[model] table ({', '.join(own)}).")
        for name in names:
            overrides.setdefault(name, dropout)
    return overrides


def check_architecture(backbone_cls, preset_config, overrides, options,
                       tokenizer_vocabulary, source):
    """Refuse a `[model]` table (or dropout) the run cannot build, before
    any work."""
    if not overrides:
        return
    if not options["from_scratch"]:
        given = "the [model] table" if options["model"] else \
            "--pretraining-dropout"
        raise PretrainingError(
            f"{given} ({source}) changes the preset's architecture, which "
            "its weights were trained for: add --from-scratch.")
    from kzoo.core.arguments import ArgumentError
    config = {**preset_config, **overrides}
    try:
        backbone_cls.check_config(config)
    except ArgumentError as error:
        raise PretrainingError(
            f"The [model] table ({source}): {error}") from None
    positions = config.get("max_sequence_length")
    length = options["sequence_length"]
    if positions is not None and positions < length:
        raise PretrainingError(
            f"The [model] table ({source}): max_sequence_length "
            f"{positions} is shorter than --sequence-length {length}; give "
            f"max_sequence_length >= {length} or a shorter sequence length.")
    vocabulary = config.get("vocabulary_size")
    if vocabulary is not None and tokenizer_vocabulary is not None and \
            vocabulary < tokenizer_vocabulary:
        raise PretrainingError(
            f"The [model] table ({source}): vocabulary_size {vocabulary} is "
            f"smaller than the tokenizer's {tokenizer_vocabulary} ids; give "
            f"vocabulary_size >= {tokenizer_vocabulary} or leave it out.")


def write_derived_preset(preset, overrides, folder):
    """A copy of `preset` (a resolved `kzoo.presets.Preset`) in `folder`
    without its weights, its config.json's backbone config updated with
    `overrides`. Returns the folder."""
    folder = Path(folder)
    folder.mkdir(parents=True)
    for entry in preset.path.iterdir():
        if entry.name.endswith(".weights.h5"):
            continue
        if entry.is_dir():
            shutil.copytree(entry, folder / entry.name)
        else:
            shutil.copy2(entry, folder / entry.name)
    entry = preset.json("config.json")
    entry["config"] = {**entry["config"], **overrides}
    (folder / "config.json").write_text(json.dumps(entry, indent=2),
                                        encoding="utf-8")
    return folder
