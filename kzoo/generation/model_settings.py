"""A generating task's own generation settings (`generation_config`):
read from its preset's `generation.json`, written back with the preset.

`GenerationSettingsMixin` goes before `Task` in a generating task's bases
(`GPT2CausalLM`, `Seq2SeqLM`). The settings are a dict in `transformers`'
key names (`{"num_beams": 4, "min_length": 56, ...}`; see
`kzoo.generation.settings` for the ones `generate` applies); `generate`
uses them unless its caller passes a value, or `generation_config={}`
for none. A model built without a preset has none; set
`model.generation_config` to give it some.
"""

from pathlib import Path

from kzoo import presets
from kzoo.generation.settings import FILENAME, checked_config
from kzoo.utils.files import write_json


def read_generation_settings(preset):
    """A preset's `generation.json` as a dict; {} when it has none."""
    preset = presets.resolve(preset)
    if not preset.has(FILENAME):
        return {}
    return checked_config(preset.json(FILENAME),
                          f"Preset {preset.name!r}'s {FILENAME}")


class GenerationSettingsMixin:
    """`generation_config`, loaded by `from_preset` and saved by
    `save_to_preset` (as `generation.json`)."""

    @property
    def generation_config(self):
        return dict(self.__dict__.get("_kzoo_generation_config", {}))

    @generation_config.setter
    def generation_config(self, config):
        self.__dict__["_kzoo_generation_config"] = checked_config(config)

    @classmethod
    def from_preset(cls, preset, *args, **kwargs):
        task = super().from_preset(preset, *args, **kwargs)
        task.generation_config = read_generation_settings(preset)
        return task

    def save_to_preset(self, preset_dir, metadata=None):
        preset_dir = Path(preset_dir)
        presets.check_destination(preset_dir)
        with presets.staged_folder(preset_dir) as staging:
            super().save_to_preset(preset_dir, metadata)
            target = staging / FILENAME
            if self.generation_config:
                write_json(target, self.generation_config)
            elif target.exists():
                target.unlink()  # the settings of a model saved before
