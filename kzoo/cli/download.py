"""`kzoo download PRESET`: fetch a preset's weights and convert them into
kzoo's cache now, without loading a model; what `from_preset` would do on
first use. `hf://org/name[@revision]` works too; `kzoo cache ls` lists the
result."""

from kzoo.cli.inputs import add_json_argument, emit_json


def add_arguments(parser):
    parser.add_argument("preset", help="a preset name or alias (`kzoo "
                        "presets`), or hf://org/name[@revision]")
    add_json_argument(parser)


def run(args):
    from kzoo import presets
    from kzoo.cli.cache import folder_size, human_size
    preset = presets.resolve(args.preset)  # hf://: downloaded, converted
    found = preset.find_weights_file(presets.BACKBONE_WEIGHTS)
    weights = preset.weights_file(presets.BACKBONE_WEIGHTS)
    folder = weights.parent
    size = folder_size(folder)
    if args.json:
        emit_json(args, {"name": preset.name, "folder": str(folder),
                         "bytes": size, "downloaded": found is None})
        return 0
    state = "already here" if found is not None else "downloaded and converted"
    print(f"{preset.name}: {state}: {folder} ({human_size(size)})")
    return 0
