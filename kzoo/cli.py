"""The `kzoo` command: everyday jobs from the shell.

Each sub-command lives in `kzoo/commands/<name>.py` and defines
`add_arguments(parser)` and `run(args)`; this file only dispatches.
"""

import argparse
import importlib
import sys

COMMANDS = {
    "demo": "Pretrain a small BERT on Austen, fill masks, classify novels.",
    "presets": "List the named presets.",
    "convert": "Convert Hugging Face checkpoints to kzoo presets and back.",
}


def register_command(name, help_text):
    COMMANDS[name] = help_text


def build_parser():
    parser = argparse.ArgumentParser(
        prog="kzoo", description="kzoo: pretrained NLP transformers in Keras 3.")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in COMMANDS.items():
        module = importlib.import_module(f"kzoo.commands.{name}")
        command_parser = sub.add_parser(name, help=help_text,
                                        description=help_text)
        module.add_arguments(command_parser)
    return parser


def user_errors():
    """kzoo's errors about what the user asked for: reported as one line,
    `kzoo <command>: error: ...`, not as a traceback."""
    from kzoo import presets
    from kzoo.convert.errors import ConversionError, DownloadError
    from kzoo.models.arguments import ArgumentError
    from kzoo.models.labels import LabelError
    from kzoo.models.tokenizer import TokenizerAssetError
    from kzoo.utils.files import JSONFileError
    return (presets.PresetError, presets.MissingWeightsError,
            ConversionError, DownloadError, ArgumentError, LabelError,
            TokenizerAssetError, JSONFileError)


def main(argv=None):
    args = build_parser().parse_args(argv)
    module = importlib.import_module(f"kzoo.commands.{args.command}")
    try:
        return module.run(args) or 0
    except user_errors() as e:
        print(f"kzoo {args.command}: error: {e}", file=sys.stderr)
        return 1


if __name__ == "__main__":
    sys.exit(main())
