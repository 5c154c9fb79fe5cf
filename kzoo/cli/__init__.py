"""The `kzoo` command: everyday jobs from the shell.

Each sub-command lives in `kzoo/cli/<name>.py` and defines
`add_arguments(parser)` and `run(args)`; this file only dispatches.
"""

import argparse
import importlib
import sys

COMMANDS = {
    "demo": "Pretrain a small BERT on Austen, fill masks, classify novels.",
    "presets": "List the named presets.",
    "convert": "Convert Hugging Face checkpoints to kzoo presets and back.",
    "info": "Show a preset: model, size, files, where the weights come from.",
    "fill-mask": "Predict the tokens behind [MASK] with a masked LM.",
    "embed": "Sentence embeddings of texts to a .npy or .jsonl file.",
    "similarity": "Rank texts by similarity to a query (semantic search).",
    "generate": "Continue prompts (GPT-2) or answer inputs (T5, BART).",
    "classify": "Label texts with a saved classifier.",
    "finetune": "Fine-tune a text classifier on a CSV/JSONL and save it.",
    "pretrain": "Masked-LM pretraining on a folder of .txt files.",
    "bench": "Time a preset's forward pass, train step and generation here.",
}


def register_command(name, help_text):
    COMMANDS[name] = help_text


def build_parser(command_parsers=None):
    """The `kzoo` parser; `command_parsers`, a dict, receives each
    sub-command's own parser."""
    parser = argparse.ArgumentParser(
        prog="kzoo", description="kzoo: pretrained NLP transformers in Keras 3.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in COMMANDS.items():
        module = _command_module(name)
        command_parser = sub.add_parser(name, help=help_text,
                                        description=help_text)
        module.add_arguments(command_parser)
        if command_parsers is not None:
            command_parsers[name] = command_parser
    return parser


def parse_args(argv=None):
    """Options may come before, between or after a command's texts
    (`kzoo fill-mask P --top-k 3 "a [MASK]" "b [MASK]"`). argparse reads a
    list of positionals after an option only in its intermixed mode, which
    it does not offer for a parser with sub-commands: so the top level
    picks the command, then the command's own parser reads the rest."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command_parsers = {}
    parser = build_parser(command_parsers)
    args, _ = parser.parse_known_args(argv)
    rest = argv[argv.index(args.command) + 1:]
    command_args = command_parsers[args.command].parse_intermixed_args(rest)
    command_args.command = args.command
    return command_args


def _command_module(name):
    return importlib.import_module(
        f"kzoo.cli.{name.replace('-', '_')}")


def user_errors():
    """kzoo's errors about what the user asked for: reported as one line,
    `kzoo <command>: error: ...`, not as a traceback."""
    from kzoo import presets
    from kzoo.cli.inputs import CommandError
    from kzoo.convert.errors import ConversionError, DownloadError
    from kzoo.core.arguments import ArgumentError
    from kzoo.core.labels import LabelError
    from kzoo.core.tokenizer import TokenizerAssetError
    from kzoo.utils.files import JSONFileError
    return (CommandError, presets.PresetError, presets.MissingWeightsError,
            ConversionError, DownloadError, ArgumentError, LabelError,
            TokenizerAssetError, JSONFileError)


def main(argv=None):
    args = parse_args(argv)
    module = _command_module(args.command)
    try:
        return module.run(args) or 0
    except user_errors() as e:
        print(f"kzoo {args.command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
