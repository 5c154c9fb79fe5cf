"""Bad input gets a clear error that says what was wrong, before any work."""

import json

import numpy as np
import pytest

import kzoo
from helpers import make_tiny_bert, random_bert_inputs
from kzoo.presets import MissingWeightsError, PresetError

VOCAB = 97


@pytest.fixture
def backbone():
    return make_tiny_bert(vocabulary_size=VOCAB, max_sequence_length=16)


@pytest.fixture
def inputs():
    return random_bert_inputs(batch=2, seq=8, vocabulary_size=VOCAB)


def test_unknown_preset_lists_close_names():
    with pytest.raises(PresetError) as error:
        kzoo.BertBackbone.from_preset("bert_bsae")
    message = str(error.value)
    assert "'bert_bsae'" in message
    assert "Did you mean" in message and "bert_base" in message
    with pytest.raises(PresetError, match="Unknown preset 'bert_base_en_cased'"
                       r".*bert_base_en_uncased"):
        kzoo.BertTextClassifier.from_preset("bert_base_en_cased",
                                            num_classes=2)
    with pytest.raises(PresetError, match="Unknown preset"):
        kzoo.BertTokenizer.from_preset("no_such_model_at_all")


def test_token_id_outside_vocabulary_eager_call(backbone, inputs):
    bad = {**inputs, "token_ids": inputs["token_ids"].copy()}
    bad["token_ids"][0, 3] = VOCAB
    with pytest.raises(ValueError, match=r"token_ids holds 97, outside "
                       r"\[0, 96\]"):
        backbone(bad)
    bad["token_ids"][0, 3] = -1
    with pytest.raises(ValueError, match=r"token_ids holds -1"):
        backbone(bad)


def test_token_id_outside_vocabulary_task_predict(backbone, inputs):
    task = kzoo.BertTextClassifier(backbone, num_classes=2)
    bad = {**inputs, "token_ids": inputs["token_ids"].copy()}
    bad["token_ids"][1, 0] = VOCAB + 5
    with pytest.raises(ValueError, match=r"token_ids holds 102, outside "
                       r"\[0, 96\]"):
        task.predict(bad, verbose=0)


def test_segment_id_out_of_range(backbone, inputs):
    bad = {**inputs, "segment_ids": inputs["segment_ids"] + 1}
    with pytest.raises(ValueError, match=r"segment_ids holds 2, outside "
                       r"\[0, 1\]"):
        backbone(bad)


def test_sequence_longer_than_position_table(backbone):
    long_inputs = random_bert_inputs(batch=1, seq=17, vocabulary_size=VOCAB)
    with pytest.raises(ValueError, match=r"Sequence length 17 is longer "
                       r"than .*max_sequence_length \(16\)"):
        backbone(long_inputs)
    task = kzoo.BertTextClassifier(backbone, num_classes=2)
    with pytest.raises(ValueError, match="Sequence length 17"):
        task.predict(long_inputs, verbose=0)


def test_wrong_input_names(backbone, inputs):
    renamed = dict(inputs)
    renamed["input_ids"] = renamed.pop("token_ids")
    with pytest.raises(ValueError) as error:
        backbone(renamed)
    message = str(error.value)
    assert "missing: ['token_ids']" in message
    assert "unexpected: ['input_ids']" in message
    with pytest.raises(ValueError, match="takes a dict"):
        backbone(inputs["token_ids"])
    task = kzoo.BertTextClassifier(backbone, num_classes=2)
    with pytest.raises(ValueError, match=r"missing: \['padding_mask'\]"):
        task.predict({k: v for k, v in inputs.items()
                      if k != "padding_mask"}, verbose=0)


def test_missing_weights_says_where_it_looked(tmp_path, monkeypatch):
    cache = tmp_path / "cache"
    monkeypatch.setenv("KZOO_CACHE", str(cache))
    monkeypatch.setenv("KZOO_OFFLINE", "1")  # never reach for the network
    with pytest.raises(MissingWeightsError) as error:
        kzoo.BertBackbone.from_preset("bert_tiny_en_uncased")
    message = str(error.value)
    assert "bert_tiny_en_uncased" in message
    assert str(cache / "bert_tiny_en_uncased" / "model.weights.h5") in message
    assert "load_weights=False" in message
    # The same preset without weights builds a random model.
    backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                             load_weights=False)
    assert backbone.num_layers == 2


def test_missing_weights_in_a_preset_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("KZOO_CACHE", str(tmp_path / "cache"))
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    folder = tmp_path / "my_preset"
    make_tiny_bert(vocabulary_size=VOCAB).save_to_preset(folder)
    (folder / "model.weights.h5").unlink()
    with pytest.raises(MissingWeightsError) as error:
        kzoo.BertBackbone.from_preset(folder)
    assert str(folder / "model.weights.h5") in str(error.value)


def test_preset_folder_without_files(tmp_path):
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(PresetError, match="not a preset folder"):
        kzoo.BertBackbone.from_preset(empty)
    with pytest.raises(PresetError, match="does not exist"):
        kzoo.BertBackbone.from_preset(str(tmp_path / "nowhere" / "x"))
    # Metadata alone: the error names the file that is missing.
    only_metadata = tmp_path / "only_metadata"
    only_metadata.mkdir()
    (only_metadata / "metadata.json").write_text(json.dumps({"name": "x"}))
    with pytest.raises(PresetError, match="has no 'config.json'"):
        kzoo.BertBackbone.from_preset(only_metadata)
    with pytest.raises(PresetError, match="has no 'tokenizer.json'"):
        kzoo.BertTokenizer.from_preset(only_metadata)


def test_config_that_does_not_match_the_weights(tmp_path):
    folder = tmp_path / "preset"
    make_tiny_bert(vocabulary_size=VOCAB).save_to_preset(folder)
    config_file = folder / "config.json"
    entry = json.loads(config_file.read_text())
    entry["config"]["hidden_dim"] = 48
    entry["config"]["intermediate_dim"] = 96
    config_file.write_text(json.dumps(entry))
    with pytest.raises(PresetError) as error:
        kzoo.BertBackbone.from_preset(folder)
    message = str(error.value)
    assert "do not fit BertBackbone" in message
    assert "(97, 32)" in message and "(97, 48)" in message
    # A config override that contradicts the weights: the same error.
    with pytest.raises(PresetError, match="do not fit"):
        kzoo.BertBackbone.from_preset(folder, hidden_dim=32,
                                      intermediate_dim=64, num_layers=3)


def test_truncated_weights_file(tmp_path):
    folder = tmp_path / "preset"
    make_tiny_bert(vocabulary_size=VOCAB).save_to_preset(folder)
    weights = folder / "model.weights.h5"
    weights.write_bytes(weights.read_bytes()[:5000])
    with pytest.raises(PresetError, match="corrupt or truncated"):
        kzoo.BertBackbone.from_preset(folder)


def test_task_weights_of_another_head(tmp_path):
    task = kzoo.BertTextClassifier(make_tiny_bert(vocabulary_size=VOCAB),
                                   num_classes=3)
    task.save_to_preset(tmp_path / "preset")
    with pytest.raises(PresetError, match=r"do not fit BertTextClassifier.*"
                       r"\(32, 3\).*\(32, 5\)"):
        kzoo.BertTextClassifier.from_preset(tmp_path / "preset",
                                            num_classes=5, preprocessor=None)


def test_preset_of_another_class_is_refused(tmp_path):
    folder = tmp_path / "preset"
    make_tiny_bert(vocabulary_size=VOCAB).save_to_preset(folder)
    entry = json.loads((folder / "config.json").read_text())
    entry["class_name"] = "NotAKzooClass"
    (folder / "config.json").write_text(json.dumps(entry))
    with pytest.raises(ValueError, match="Unknown kzoo class 'NotAKzooClass'"):
        kzoo.BertBackbone.from_preset(folder)


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="divisible"):
        kzoo.BertBackbone(vocabulary_size=10, num_layers=1, num_heads=3,
                          hidden_dim=16, intermediate_dim=8)
    with pytest.raises(ValueError, match="Unknown activation 'gleu'"):
        kzoo.BertBackbone(vocabulary_size=10, num_layers=1, num_heads=2,
                          hidden_dim=16, intermediate_dim=8,
                          activation="gleu")


def test_pretrainer_preprocessor_needs_pairs():
    preprocessor = kzoo.BertPretrainerPreprocessor.from_preset(
        "bert_base_en_uncased", sequence_length=16)
    with pytest.raises(ValueError, match="sentence pairs"):
        preprocessor(["just one text"], np.array([0]))
