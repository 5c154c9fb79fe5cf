"""Writing preset folders: the folder lands whole or not at all.

`save_to_preset` writes into a staging folder beside the preset folder
(`kzoo.presets.staged_folder`) that replaces it once every file is
written: a process killed mid-save leaves the old preset as it was, never
a new config beside old weights."""

from pathlib import Path

import keras

from kzoo import presets
from kzoo.core.head_weights import save_head_weights
from kzoo.utils.files import read_json, sha256_of, write_json


def update_metadata(preset_dir, **fields):
    path = Path(preset_dir) / "metadata.json"
    metadata = read_json(path) if path.exists() else {}
    metadata.update(fields)
    write_json(path, metadata)
    return metadata


def _weights_record(path):
    return {"file": path.name, "sha256": sha256_of(path),
            "bytes": path.stat().st_size}


def write_backbone(backbone, preset_dir, metadata=None):
    preset_dir = Path(preset_dir)
    presets.check_destination(preset_dir)
    with presets.staged_folder(preset_dir) as staging:
        _write_backbone(backbone, staging, preset_dir.name, metadata)


def _write_backbone(backbone, preset_dir, name, metadata):
    write_json(preset_dir / "config.json", backbone.config_entry())
    weights = preset_dir / presets.BACKBONE_WEIGHTS
    backbone.save_weights_atomic(weights)
    fields = {
        "name": name,
        "family": backbone.family,
        "class_name": type(backbone).__name__,
        "params": int(backbone.count_params()),
        "keras_version": keras.__version__,
        "weights": {"backbone": _weights_record(weights)},
    }
    fields.update(metadata or {})
    existing = preset_dir / "metadata.json"
    if existing.exists():
        old = read_json(existing)
        fields["weights"] = {**old.get("weights", {}), **fields["weights"]}
    update_metadata(preset_dir, **fields)


def write_task(task, preset_dir, metadata=None):
    preset_dir = Path(preset_dir)
    presets.check_destination(preset_dir)
    with presets.staged_folder(preset_dir) as staging:
        _write_task(task, staging, preset_dir.name, metadata)


def _write_task(task, preset_dir, name, metadata):
    _write_backbone(task.backbone, preset_dir, name, metadata)
    if task.preprocessor is not None:
        task.preprocessor.save_to_preset(preset_dir)
    write_json(preset_dir / "task.json", task.config_entry())
    # Only the heads: the backbone's weights are in model.weights.h5.
    weights = preset_dir / presets.TASK_WEIGHTS
    save_head_weights(task, weights)
    old = read_json(preset_dir / "metadata.json")
    update_metadata(
        preset_dir, task_class_name=type(task).__name__,
        weights={**old.get("weights", {}), "task": _weights_record(weights)})
