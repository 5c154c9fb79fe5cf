"""The `kzoo` command: everyday jobs from the shell.

Each sub-command lives in `kzoo/cli/<name>.py` and defines
`add_arguments(parser)` and `run(args)`; this file only dispatches.

Building the parser imports the command modules, so their top level may
import the standard library and `kzoo.cli.inputs` only (heavy imports go
inside `run`): `kzoo --help` then never imports Keras (see
`kzoo_launcher.py`; tests/test_cli_contract.py checks both).

A command module may also define:
- `BACKENDS = False`: it runs without importing Keras and the backends
  (`kzoo presets`, `info`, `env` read JSON and versions: well under a
  second instead of ~6 s); `args.load_kzoo()` imports them if a case
  needs them after all (an `hf://` reference for `kzoo info`);
- `check_before_backends(args)`: checks of its inputs that need no
  backend (a data file), run before the backends load, so that a mistake
  is reported at once.
"""

import argparse
import contextlib
import importlib
import os
import re
import sys
import tempfile

COMMANDS = {
    "demo": "Search Austen by meaning, fine-tune a novel classifier, "
            "pretrain a small BERT.",
    "presets": "List the named presets.",
    "convert": "Convert Hugging Face checkpoints to kzoo presets and back.",
    "info": "Show a preset: model, size, files, where the weights come from.",
    "download": "Download and convert a named preset into kzoo's cache.",
    "cache": "List or remove the presets in kzoo's cache.",
    "fill-mask": "Predict the tokens behind [MASK] with a masked LM.",
    "embed": "Sentence embeddings of texts to a .npy or .jsonl file.",
    "similarity": "Rank texts by similarity to a query (semantic search).",
    "generate": "Continue prompts (GPT-2) or answer inputs (T5, BART).",
    "classify": "Label texts with a saved classifier.",
    "finetune": "Fine-tune a text classifier on a CSV/JSONL and save it.",
    "pretrain": "Pretrain on a prepared corpus, resuming after a crash.",
    "prepare-corpus": "Tokenize a folder of text into shards for pretraining.",
    "train-tokenizer": "Train a family's vocabulary on your text, as a preset.",
    "bench": "Time a preset's forward pass, train step and generation here.",
    "env": "Versions, backend, devices and cache paths (for bug reports).",
}

# Exit statuses, as `kzoo --help` documents them.
EXIT_OK = 0
EXIT_ERROR = 1        # a kzoo error: one line, `kzoo <command>: error: ...`
EXIT_USAGE = 2        # argparse's, for a usage error
EXIT_BUG = 70         # EX_SOFTWARE (sysexits.h): a traceback, a kzoo bug
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report Ctrl-C
EXIT_PIPE_CLOSED = 141  # 128 + SIGPIPE, as shells report `... | head`

EPILOG = """\
exit status:
  0    done
  1    a kzoo error: one line on stderr, `kzoo COMMAND: error: ...`
  2    a usage error (unknown option, missing argument)
  70   a bug in kzoo: a traceback; please report it with `kzoo env`'s output
  130  interrupted (Ctrl-C)
  141  stdout was closed early (`kzoo presets | head -1`), as for SIGPIPE

--json prints one JSON document on stdout and nothing else there; progress
and logs go to stderr. Texts not given as arguments nor with --file are
read from stdin, one per line."""

BUG_MESSAGE = ("kzoo {command}: this is a bug in kzoo, please report it with "
               "the traceback above and the output of `kzoo env`.")


def register_command(name, help_text):
    COMMANDS[name] = help_text


def _version():
    from kzoo.version import __version__  # a constant: imports nothing
    return __version__


def build_parser(command_parsers=None):
    """The `kzoo` parser; `command_parsers`, a dict, receives each
    sub-command's own parser."""
    parser = argparse.ArgumentParser(
        prog="kzoo", description="kzoo: pretrained NLP transformers in Keras 3.",
        epilog=EPILOG, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version",
                        version=f"kzoo {_version()}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, help_text in COMMANDS.items():
        module = _command_module(name)
        command_parser = sub.add_parser(
            name, help=help_text, description=help_text, epilog=EPILOG,
            formatter_class=argparse.RawDescriptionHelpFormatter)
        module.add_arguments(command_parser)
        if command_parsers is not None:
            command_parsers[name] = command_parser
    return parser


def parse_args(argv=None):
    """Options may come before, between or after a command's texts
    (`kzoo fill-mask P --top 3 "a [MASK]" "b [MASK]"`). argparse reads a
    list of positionals after an option only in its intermixed mode, which
    it does not offer for a parser with sub-commands: so the top level
    picks the command, then the command's own parser reads the rest (in
    the plain mode for a command with actions of its own, `kzoo cache ls`,
    which says `INTERMIXED = False`)."""
    argv = sys.argv[1:] if argv is None else list(argv)
    command_parsers = {}
    parser = build_parser(command_parsers)
    args, _ = parser.parse_known_args(argv)
    rest = argv[argv.index(args.command) + 1:]
    command_parser = command_parsers[args.command]
    if getattr(_command_module(args.command), "INTERMIXED", True):
        command_args = command_parser.parse_intermixed_args(rest)
    else:
        command_args = command_parser.parse_args(rest)
    command_args.command = args.command
    return command_args


def _command_module(name):
    return importlib.import_module(
        f"kzoo.cli.{name.replace('-', '_')}")


# kzoo's errors about what the user asked for, by module: reported as one
# line, `kzoo <command>: error: ...`, not as a traceback.
_USER_ERRORS = (
    ("kzoo.cli.inputs", "CommandError"), ("kzoo.presets", "PresetError"),
    ("kzoo.presets", "MissingWeightsError"),
    ("kzoo.convert.errors", "ConversionError"),
    ("kzoo.convert.errors", "DownloadError"),
    ("kzoo.core.arguments", "ArgumentError"),
    ("kzoo.core.labels", "LabelError"),
    ("kzoo.core.tokenizer", "TokenizerAssetError"),
    ("kzoo.utils.files", "JSONFileError"))


def user_errors():
    """The user-error classes of the modules imported so far: a class
    whose module was never imported cannot have been raised, and
    importing it would load the backends (seconds) to print one line."""
    return tuple(getattr(sys.modules[module], name)
                 for module, name in _USER_ERRORS if module in sys.modules)


# TensorFlow's native start-up lines. TF_CPP_MIN_LOG_LEVEL no longer
# silences them on 2.19/2.20 (absl logs before absl::InitializeLog():
# tensorflow/tensorflow#100442), so stderr is caught while kzoo imports
# TensorFlow and everything but these lines is written back.
_TF_NOISE = re.compile(
    r"^(WARNING: All log messages before absl::InitializeLog\(\)"
    r"|[IW]\d{4} [\d:.]+ +\d+ \S+:\d+\] "
    r"|E\d{4} [\d:.]+ +\d+ \S+:\d+\] failed call to cuInit"
    r"|\d{4}-\d\d-\d\d [\d:.]+: [IW] \S+:\d+\] "
    r"|To enable the following instructions: .* rebuild TensorFlow)")


@contextlib.contextmanager
def quiet_native_stderr():
    """File descriptor 2 into a temporary file for the duration; then the
    lines that are not TensorFlow's start-up noise back to stderr."""
    try:
        saved = os.dup(2)
    except OSError:  # no usable fd 2 (an embedded interpreter)
        yield
        return
    with tempfile.TemporaryFile(mode="w+b") as caught:
        sys.stderr.flush()
        os.dup2(caught.fileno(), 2)
        try:
            yield
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(saved)
            caught.seek(0)
            kept = [line for line in caught.read().decode(
                "utf-8", "replace").splitlines(keepends=True)
                if not _TF_NOISE.match(line)]
            if kept:
                sys.stderr.write("".join(kept))
                sys.stderr.flush()


def quiet_tensorflow_logs():
    """Before TensorFlow is imported: its C++ logs at WARNING and above
    only (unless the user set TF_CPP_MIN_LOG_LEVEL). After: absl's Python
    logging at ERROR."""
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
    if "absl.logging" in sys.modules:
        absl_logging = sys.modules["absl.logging"]
        absl_logging.set_verbosity(absl_logging.ERROR)


def _import_kzoo(finish_import):
    quiet_tensorflow_logs()
    if finish_import is not None:
        with quiet_native_stderr():
            finish_import()
            # TensorFlow looks for a GPU at its first op, not at import:
            # look now, so that its "failed call to cuInit" line on a
            # machine without one is caught with the rest.
            if "tensorflow" in sys.modules:
                sys.modules["tensorflow"].config.list_physical_devices()
    quiet_tensorflow_logs()


def main(argv=None, finish_import=None):
    """Run `kzoo` with `argv`; returns the exit status (see EPILOG).

    `finish_import`, from `kzoo_launcher`: runs `kzoo/__init__.py`, which
    the launcher deferred until the arguments were read."""
    command = None
    try:
        args = parse_args(argv)
        command = args.command
        module = _command_module(command)
        if hasattr(args, "texts") and hasattr(args, "file"):
            # Before the backends load: a mistake in the texts is one line,
            # without TensorFlow's start-up output or seconds of imports.
            from kzoo.cli.inputs import read_texts
            args.texts_read = read_texts(args)
        if hasattr(module, "check_before_backends"):
            module.check_before_backends(args)
        if getattr(module, "BACKENDS", True):
            _import_kzoo(finish_import)
        else:
            args.load_kzoo = lambda: _import_kzoo(finish_import)
        args.stdout = sys.stdout
        if getattr(args, "json", False):
            # Anything a command or a library prints goes to stderr: stdout
            # holds the one JSON document (`inputs.emit_json`).
            with contextlib.redirect_stdout(sys.stderr):
                code = module.run(args) or EXIT_OK
        else:
            code = module.run(args) or EXIT_OK
        args.stdout.flush()  # a closed pipe is reported here, not at exit
        return code
    except KeyboardInterrupt:
        print(f"kzoo{' ' + command if command else ''}: interrupted",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `kzoo presets | head -1`: the reader left; say nothing more.
        _discard_stdout()
        return EXIT_PIPE_CLOSED
    except Exception as error:  # noqa: BLE001 - sorted just below
        from kzoo.cli.inputs import CommandError
        # A CommandError may come before kzoo loaded (reading the texts):
        # tested first, so that nothing imports the backends to report it.
        if command is not None and (isinstance(error, CommandError) or
                                    isinstance(error, _user_errors_or_none())):
            print(f"kzoo {command}: error: {error}", file=sys.stderr)
            return EXIT_ERROR
        import traceback
        traceback.print_exc()
        print(BUG_MESSAGE.format(command=command or "(no command)"),
              file=sys.stderr)
        return EXIT_BUG


def _user_errors_or_none():
    try:
        return user_errors()
    except Exception:  # noqa: BLE001 - kzoo itself failed to import
        return ()


def _discard_stdout():
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError, AttributeError):
        pass


if __name__ == "__main__":
    sys.exit(main())
