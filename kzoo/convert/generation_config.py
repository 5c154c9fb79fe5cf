"""A checkpoint's generation settings, as a preset keeps them
(`generation.json`, transformers' key names; `kzoo.generation.settings`
says which ones `generate` applies).

transformers reads them from `generation_config.json`; a checkpoint
written before that file existed keeps them at the top of `config.json`
(transformers' `GenerationConfig.from_model_config` reads them there
then). `config.json`'s `task_specific_params` (T5's per-task prefixes and
beam settings, BART's summarisation ones) come along under that key: they
are what transformers' pipelines apply per task.
"""

from kzoo.generation.settings import FILENAME
from kzoo.utils.files import write_json

HF_FILENAME = "generation_config.json"
# The generation fields transformers' `GenerationConfig` takes from an
# older `config.json` (those a classic checkpoint sets).
MODEL_CONFIG_FIELDS = (
    "max_length", "min_length", "do_sample", "early_stopping", "num_beams",
    "num_beam_groups", "diversity_penalty", "temperature", "top_k",
    "top_p", "typical_p", "repetition_penalty", "length_penalty",
    "no_repeat_ngram_size", "encoder_no_repeat_ngram_size",
    "bad_words_ids", "num_return_sequences", "output_scores",
    "return_dict_in_generate", "forced_bos_token_id",
    "forced_eos_token_id", "remove_invalid_values",
    "exponential_decay_length_penalty", "suppress_tokens",
    "begin_suppress_tokens", "bos_token_id", "eos_token_id",
    "pad_token_id", "decoder_start_token_id")
# Bookkeeping of transformers' files, not settings.
_BOOKKEEPING = ("_from_model_config", "transformers_version")


def generation_settings(checkpoint):
    """The settings of an `HFCheckpoint` (a dict; {} when it has none)."""
    stored = checkpoint.json(HF_FILENAME)
    if isinstance(stored, dict):
        settings = {key: value for key, value in stored.items()
                    if key not in _BOOKKEEPING}
    else:
        config = checkpoint.config
        settings = {key: config[key] for key in MODEL_CONFIG_FIELDS
                    if config.get(key) is not None}
    tasks = checkpoint.config.get("task_specific_params")
    if isinstance(tasks, dict) and tasks:
        settings["task_specific_params"] = tasks
    return settings


def write_generation_settings(checkpoint, preset_dir):
    """`generation.json` in `preset_dir`, when the checkpoint has any
    settings; the settings written (or {})."""
    settings = generation_settings(checkpoint)
    if settings:
        write_json(preset_dir / FILENAME, settings)
    return settings
