"""What the text-reading commands share: texts from the command line, a
file or stdin, and the task a preset holds."""

import sys


class CommandError(ValueError):
    """A command-line mistake: `kzoo` prints it as one line and exits 1."""


def add_text_arguments(parser, what="texts"):
    parser.add_argument("texts", nargs="*", help=f"the {what}; or use "
                        "--file, or pipe them to stdin (one per line)")
    parser.add_argument(
        "--file", help="read the texts from this file, one per line "
        "(blank lines skipped); '-' reads stdin")


def add_json_argument(parser):
    parser.add_argument("--json", action="store_true",
                        help="print one JSON document on stdout (nothing "
                        "else goes there; progress goes to stderr)")


def add_alias(parser, old, new, dest, **kwargs):
    """`old`, a hidden spelling of `new` kept for scripts written before
    the flags were made consistent (it sets the same `dest`)."""
    import argparse
    parser.add_argument(old, dest=dest, default=argparse.SUPPRESS,
                        help=argparse.SUPPRESS, **kwargs)


def emit_json(args, data):
    """`data` as JSON on the command's real stdout (`kzoo` sends whatever
    else is printed under --json to stderr)."""
    import json
    out = getattr(args, "stdout", None) or sys.stdout
    json.dump(data, out, ensure_ascii=False)
    out.write("\n")


def read_texts(args):
    """The texts given as arguments, in `--file`, or else on stdin (one per
    line, blank lines skipped); never from two places, never none. Read
    once: `kzoo.cli.main` reads them before the backends load."""
    if getattr(args, "texts_read", None) is not None:
        return args.texts_read
    if args.texts and args.file:
        raise CommandError("give texts as arguments or with --file, not "
                           "both.")
    if args.texts:
        return list(args.texts)
    if args.file and args.file != "-":
        try:
            with open(args.file, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise CommandError(f"cannot read --file {args.file}: "
                               f"{e.strerror}.") from None
        except UnicodeDecodeError:
            raise CommandError(f"--file {args.file} is not UTF-8 text."
                               ) from None
        where = f"--file {args.file}"
    else:
        lines = _stdin_lines()
        where = "stdin"
    texts = [line for line in lines if line.strip()]
    if not texts:
        raise CommandError(f"no text: {where} holds none (give texts as "
                           "arguments, with --file, or one per line on "
                           "stdin).")
    return texts


def _stdin_lines():
    if sys.stdin is None:
        return []
    if sys.stdin.isatty():
        print("kzoo: reading texts from stdin, one per line; end with "
              "Ctrl-D", file=sys.stderr, flush=True)
    try:
        return sys.stdin.read().splitlines()
    except UnicodeDecodeError:
        raise CommandError("stdin is not UTF-8 text.") from None


def family_task_class(backbone_cls, kind):
    """`kind` itself when it is a family's own task (BertTextEmbedder),
    else the family's subclass of the base task `kind`; None if neither."""
    from kzoo.core.family import family_task
    own = getattr(kind, "backbone_cls", None)
    if own is not None and issubclass(backbone_cls, own) and \
            own.__name__ != "Backbone":
        return kind
    return family_task(backbone_cls, kind)


def preset_task(preset, kind, what, **kwargs):
    """The preset's family's task of `kind` (a task base class), loaded from
    the preset (`kwargs`: task arguments); a CommandError when the family
    has none."""
    from kzoo.core.family import preset_backbone_class
    from kzoo.presets import resolve
    resolved = resolve(preset)
    task_cls = family_task_class(preset_backbone_class(resolved), kind)
    if task_cls is None:
        family = resolved.metadata.get("family") or "this"
        raise CommandError(f"{what} needs a preset whose family has a "
                           f"{kind.__name__}; the {family} family has none "
                           "(`kzoo presets` lists the families).")
    return task_cls.from_preset(preset, **kwargs)
