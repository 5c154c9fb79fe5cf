"""What the text-reading commands share: texts from the command line, a
file or stdin, and the task a preset holds."""

import sys


class CommandError(ValueError):
    """A command-line mistake: `kzoo` prints it as one line and exits 1."""


def add_text_arguments(parser, what="texts"):
    parser.add_argument("texts", nargs="*", help=f"the {what}; or use --file")
    parser.add_argument(
        "--file", help="read the texts from this file, one per line "
        "(blank lines skipped); '-' reads stdin")


def read_texts(args):
    """The texts given as arguments or in `--file`, never both nor none."""
    if args.texts and args.file:
        raise CommandError("give texts as arguments or with --file, not "
                           "both.")
    if args.file:
        if args.file == "-":
            lines = sys.stdin.read().splitlines()
        else:
            try:
                with open(args.file, encoding="utf-8") as f:
                    lines = f.read().splitlines()
            except OSError as e:
                raise CommandError(f"cannot read --file {args.file}: "
                                   f"{e.strerror}.") from None
            except UnicodeDecodeError:
                raise CommandError(f"--file {args.file} is not UTF-8 text."
                                   ) from None
        texts = [line for line in lines if line.strip()]
        if not texts:
            raise CommandError(f"--file {args.file} holds no text.")
        return texts
    if not args.texts:
        raise CommandError("give at least one text (as an argument, or one "
                           "per line with --file).")
    return list(args.texts)


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
