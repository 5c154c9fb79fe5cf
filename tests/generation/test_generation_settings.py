"""Generation settings as a user meets them: contradictory settings are
refused in one line before any work, a preset keeps its settings
(`generation.json`) through save and load, a conversion reads them from
the checkpoint's files, the shipped summariser carries its checkpoint's
settings, and the encoder reads as many tokens as the checkpoint's
position table holds (with a warning naming both lengths when an input
is cut). Token parity with transformers: test_generation_settings_parity.
"""

import json

import pytest

import kzoo
from bart_testing import BART_PRESET
from gpt2_testing import tiny_causal_lm
from kzoo.generation.model_settings import read_generation_settings

pytestmark = pytest.mark.once


@pytest.fixture(scope="module")
def lm():
    return tiny_causal_lm()  # vocabulary of 97, 64 positions


@pytest.mark.parametrize("settings,arguments,message", [
    ({}, dict(max_length=8, min_length=10),
     "min_length=10 is more than max_length=8"),
    ({}, dict(max_new_tokens=3, min_new_tokens=5),
     "min_new_tokens=5 is more than max_new_tokens=3"),
    ({"num_beams": 0}, dict(max_new_tokens=3),
     "num_beams must be >= 1, got 0"),
    ({}, dict(max_new_tokens=3, sampler={"name": "beam", "num_beams": 0}),
     "num_beams must be >= 1, got 0"),
    ({}, dict(max_new_tokens=3, forced_bos_token_id=97),
     "forced_bos_token_id=97 is outside the vocabulary [0, 96]"),
    ({"forced_eos_token_id": [1, 500]}, dict(max_new_tokens=3),
     "(the model's generation settings): forced_eos_token_id=500 is "
     "outside the vocabulary"),
    ({}, dict(max_new_tokens=3, bad_words_ids=[[2, 1000]]),
     "bad_words_ids=1000 is outside the vocabulary"),
    ({}, dict(max_new_tokens=3, bad_words_ids=[]),
     "bad_words_ids must be a non-empty list"),
    ({}, dict(max_new_tokens=3, repetition_penalty=0.0),
     "repetition_penalty must be a number > 0"),
])
def test_contradictory_settings_are_refused_before_any_work(
        lm, settings, arguments, message):
    lm.generation_config = settings
    functions = lm.__dict__.get("_kzoo_generate_functions", {})
    before = len(functions)
    with pytest.raises(ValueError) as error:
        lm.generate([[2, 3, 4]], **arguments)
    assert message in str(error.value)
    assert "\n" not in str(error.value)
    assert len(functions) == before  # nothing was built
    lm.generation_config = {}


def test_unknown_control_names_a_close_one(lm):
    with pytest.raises(TypeError, match="did you mean 'no_repeat_ngram_size'"):
        lm.generate([[2, 3]], max_new_tokens=2, no_repeat_ngram=3)


def test_preset_minimum_gives_way_to_the_callers_maximum(lm):
    # bart_large_cnn_en's min_length=56 with a caller asking for 4 tokens:
    # no error, the caller's length wins (transformers stops at max_length
    # too); the same minimum from the caller is refused (above).
    lm.generation_config = {"min_length": 56}
    ids = lm.generate([[2, 3, 4]], max_new_tokens=4, stop_token_ids=None)
    assert len(ids[0]) == 7
    lm.generation_config = {}


def test_settings_survive_save_and_load(lm, tmp_path):
    settings = {"num_beams": 2, "no_repeat_ngram_size": 2,
                "task_specific_params": {"summarization": {"num_beams": 4}}}
    lm.generation_config = settings
    lm.save_to_preset(tmp_path / "lm")
    assert json.loads((tmp_path / "lm" / "generation.json").read_text()) \
        == settings
    loaded = kzoo.GPT2CausalLM.from_preset(str(tmp_path / "lm"),
                                           preprocessor=None)
    assert loaded.generation_config == settings
    lm.generation_config = {}
    lm.save_to_preset(tmp_path / "lm")  # a model without settings
    assert not (tmp_path / "lm" / "generation.json").exists()


def test_conversion_reads_settings_from_config_json(tmp_path):
    """A checkpoint from before generation_config.json keeps its settings
    in config.json (facebook/bart-large-cnn's layout); transformers' own
    file wins when there is one."""
    from kzoo import convert
    from bart_testing import make_tiny_bart
    convert.export_hf(kzoo.BartSeq2SeqLM(make_tiny_bart(), preprocessor=None),
                      tmp_path / "hf", verbose=False)
    config = json.loads((tmp_path / "hf" / "config.json").read_text())
    config.update(num_beams=4, min_length=56, no_repeat_ngram_size=3,
                  task_specific_params={"summarization": {"num_beams": 4}})
    (tmp_path / "hf" / "config.json").write_text(json.dumps(config))
    convert.hf_to_preset(tmp_path / "hf", tmp_path / "kz", verbose=False)
    settings = read_generation_settings(str(tmp_path / "kz"))
    assert settings["num_beams"] == 4 and settings["min_length"] == 56
    assert settings["no_repeat_ngram_size"] == 3
    assert settings["task_specific_params"] == {
        "summarization": {"num_beams": 4}}
    (tmp_path / "hf" / "generation_config.json").write_text(json.dumps(
        {"num_beams": 2, "transformers_version": "4.27.0"}))
    convert.hf_to_preset(tmp_path / "hf", tmp_path / "kz", overwrite=True,
                         verbose=False)
    settings = read_generation_settings(str(tmp_path / "kz"))
    assert settings["num_beams"] == 2 and "min_length" not in settings
    assert "transformers_version" not in settings


def test_the_summariser_carries_its_checkpoints_settings():
    settings = read_generation_settings("bart_large_cnn")
    assert {key: settings[key] for key in (
        "num_beams", "length_penalty", "early_stopping", "min_length",
        "max_length", "no_repeat_ngram_size", "forced_bos_token_id",
        "forced_eos_token_id")} == {
        "num_beams": 4, "length_penalty": 2.0, "early_stopping": True,
        "min_length": 56, "max_length": 142, "no_repeat_ngram_size": 3,
        "forced_bos_token_id": 0, "forced_eos_token_id": 2}
    assert "facebook/bart-large-cnn" in kzoo.presets.resolve(
        "bart_large_cnn").metadata["generation_settings"]


def test_encoder_reads_the_checkpoints_positions_and_warns_on_a_cut():
    # BART's table: 1,024 positions (was: the preprocessor's default 512).
    preprocessor = kzoo.BartSeq2SeqLM.preprocessor_for(str(BART_PRESET))
    assert preprocessor.sequence_length == 1024
    short = kzoo.BartSeq2SeqLM.preprocessor_for(str(BART_PRESET),
                                                sequence_length=8)
    with pytest.warns(UserWarning, match=r"Input 1 has \d+ tokens .*the "
                      r"encoder reads 8 \(sequence_length\)"):
        ids = short.generate_preprocess(
            ["Short.", "It is a truth universally acknowledged, that a "
                       "single man in possession of a good fortune"])
    assert len(ids[1]) == 8 and ids[1][-1] == 2  # cut, </s> kept
