"""The generation settings of the named generating presets: what each
checkpoint's Hugging Face repository states, in transformers' key names
(`generation_config.json`, and `config.json`'s `task_specific_params`).
scripts/make_presets.py writes them to the preset's `generation.json`
(which `generate`, `kzoo generate` and `kzoo info` read) and their
provenance to metadata.json's `generation_settings`.

The values were transcribed from the repositories' files as published
(the hub could not be reached when this table was written). A checkpoint
converted from a Hugging Face folder or `hf://` gets its settings from
its own files instead (kzoo.convert.generation_config).
"""

HF = "https://huggingface.co"

# BART's generation_config.json, as transformers derived it from the
# config.json of each repository (generation fields at its top level).
_BART = {"bos_token_id": 0, "decoder_start_token_id": 2,
         "early_stopping": True, "eos_token_id": 2,
         "forced_bos_token_id": 0, "forced_eos_token_id": 2,
         "no_repeat_ngram_size": 3, "num_beams": 4, "pad_token_id": 1}
# facebook/bart-base's and facebook/bart-large's config.json: the
# summarisation settings of the fine-tuned checkpoints, for pipelines.
_BART_TASKS = {
    "summarization": {"length_penalty": 1.0, "max_length": 128,
                      "min_length": 12, "num_beams": 4},
    "summarization_cnn": {"length_penalty": 2.0, "max_length": 142,
                          "min_length": 56, "num_beams": 4},
    "summarization_xsum": {"length_penalty": 1.0, "max_length": 62,
                           "min_length": 11, "num_beams": 6},
}
# T5's generation_config.json (ids only: T5 decodes greedily by default)
# and config.json's per-task settings (the original T5's task prefixes;
# Flan-T5's config.json carries the same block).
_T5 = {"decoder_start_token_id": 0, "eos_token_id": 1, "pad_token_id": 0}
_T5_TASKS = {
    "summarization": {"early_stopping": True, "length_penalty": 2.0,
                      "max_length": 200, "min_length": 30,
                      "no_repeat_ngram_size": 3, "num_beams": 4,
                      "prefix": "summarize: "},
    "translation_en_to_de": {"early_stopping": True, "max_length": 300,
                             "num_beams": 4,
                             "prefix": "translate English to German: "},
    "translation_en_to_fr": {"early_stopping": True, "max_length": 300,
                             "num_beams": 4,
                             "prefix": "translate English to French: "},
    "translation_en_to_ro": {"early_stopping": True, "max_length": 300,
                             "num_beams": 4,
                             "prefix": "translate English to Romanian: "},
}
# GPT-2's generation_config.json (ids only: greedy by default) and
# config.json's text-generation pipeline setting.
_GPT2 = {"bos_token_id": 50256, "eos_token_id": 50256}
_GPT2_TASKS = {"text-generation": {"do_sample": True, "max_length": 50}}


def _row(repo, settings, tasks=None):
    settings = dict(settings)
    if tasks:
        settings["task_specific_params"] = tasks
    files = "generation_config.json" + (
        " and config.json's task_specific_params" if tasks else "")
    return {"settings": settings,
            "provenance": f"{files} of {HF}/{repo}, in transformers' key "
                          "names (transcribed from the published files)"}


GENERATION = {
    "bart_base_en": _row("facebook/bart-base", _BART, _BART_TASKS),
    "bart_large_en": _row("facebook/bart-large", _BART, _BART_TASKS),
    # The summariser: 4 beams, longer summaries favoured, 56 to 142 tokens
    # (the decoder start included), no repeated trigram.
    "bart_large_cnn_en": _row("facebook/bart-large-cnn", {
        **_BART, "length_penalty": 2.0, "max_length": 142,
        "min_length": 56}),
    **{name: _row(repo, _T5, _T5_TASKS) for name, repo in (
        ("t5_small_multi", "google-t5/t5-small"),
        ("t5_base_multi", "google-t5/t5-base"),
        ("t5_large_multi", "google-t5/t5-large"),
        ("flan_t5_small_multi", "google/flan-t5-small"),
        ("flan_t5_base_multi", "google/flan-t5-base"),
        ("flan_t5_large_multi", "google/flan-t5-large"))},
    **{name: _row(repo, _GPT2, _GPT2_TASKS) for name, repo in (
        ("gpt2_base_en", "openai-community/gpt2"),
        ("gpt2_medium_en", "openai-community/gpt2-medium"),
        ("gpt2_large_en", "openai-community/gpt2-large"),
        ("gpt2_extra_large_en", "openai-community/gpt2-xl"))},
}
