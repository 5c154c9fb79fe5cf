"""`kzoo presets`: list the named presets."""

from kzoo.cli.inputs import add_json_argument, emit_json

BACKENDS = False  # reads the presets' metadata.json: no Keras (kzoo.cli)


def add_arguments(parser):
    parser.add_argument("--family", help="only this family (e.g. bert)")
    add_json_argument(parser)


def run(args):
    from kzoo import presets
    rows = presets.list_presets(family=args.family)
    if not rows and args.family:
        families = sorted({row["family"] for row in presets.list_presets()
                           if row["family"]})
        raise presets.PresetError(
            f"no presets of family {args.family!r}; the families are "
            f"{', '.join(families)}.")
    if args.json:
        emit_json(args, rows)
        return 0
    width = max(len(row["name"]) for row in rows)
    for row in rows:
        aliases = f" (alias: {', '.join(row['aliases'])})" if row["aliases"] else ""
        params = f"{row['params'] / 1e6:.1f}M" if row["params"] else "?"
        print(f"{row['name']:<{width}} {params:>8}  {row['description']}{aliases}")
