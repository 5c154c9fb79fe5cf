"""Saving never destroys what is at the destination: a path to a file, or
a folder of other files, is refused with the path left as it was; an empty
or missing folder, or a kzoo preset (replaced whole), is fine. A
preprocessor built from a preset refuses a sequence_length past the
preset's position table."""

import json

import pytest

import kzoo
from kzoo import presets

pytestmark = pytest.mark.once   # file handling, no backend numerics

BERT = "bert_tiny_en_uncased"


@pytest.fixture(scope="module")
def classifier():
    return kzoo.BertTextClassifier.from_preset(
        BERT, num_classes=2, load_weights=False, sequence_length=16)


def _snapshot(folder):
    return {p.relative_to(folder): p.read_bytes()
            for p in sorted(folder.rglob("*")) if p.is_file()}


def test_a_path_to_a_file_is_refused_and_left_alone(classifier, tmp_path):
    preset = tmp_path / "my_model"
    classifier.save_to_preset(preset)
    before = _snapshot(preset)
    with pytest.raises(presets.PresetError, match="it is a file"):
        classifier.save_to_preset(preset / "config.json")
    assert _snapshot(preset) == before
    assert not [p for p in tmp_path.rglob(".*")]   # no hidden leftovers


def test_a_folder_of_other_files_is_refused(classifier, tmp_path):
    # A Hugging Face checkpoint: config.json and tokenizer.json by name,
    # but not kzoo's.
    hf = tmp_path / "hf"
    hf.mkdir()
    (hf / "config.json").write_text(json.dumps({"model_type": "bert"}))
    (hf / "model.safetensors").write_bytes(b"weights")
    before = _snapshot(hf)
    for save in (classifier.save_to_preset, classifier.backbone.save_to_preset,
                 classifier.preprocessor.save_to_preset,
                 classifier.preprocessor.tokenizer.save_to_preset):
        with pytest.raises(presets.PresetError, match="no kzoo preset"):
            save(hf)
        assert _snapshot(hf) == before


def test_a_kzoo_preset_or_an_empty_folder_is_written(classifier, tmp_path):
    (tmp_path / "empty").mkdir()
    classifier.save_to_preset(tmp_path / "empty")
    classifier.save_to_preset(tmp_path / "empty")   # over its own preset
    tokenizer_only = tmp_path / "tokenizer"
    classifier.preprocessor.tokenizer.save_to_preset(tokenizer_only)
    classifier.save_to_preset(tokenizer_only)
    loaded = kzoo.BertTextClassifier.from_preset(str(tokenizer_only))
    assert loaded.num_classes == 2


def test_a_preprocessor_refuses_a_length_past_the_presets_positions():
    limit = presets.resolve(BERT).json("config.json")["config"][
        "max_sequence_length"]
    with pytest.raises(ValueError, match=f"max_sequence_length={limit}"):
        kzoo.BertPreprocessor.from_preset(BERT, sequence_length=limit + 1)
    kzoo.BertPreprocessor.from_preset(BERT, sequence_length=limit)
