"""Presets (names, folders, damaged files), conversion from and to Hugging
Face folders, the download cache (`hf://`, offline) and the `kzoo`
command."""

import json
import shutil
import struct

import pytest

import kzoo
from kzoo import cli, presets
from kzoo.convert import ConversionError, export_hf, hf_to_preset
from kzoo.core.backbone import Backbone
from kzoo.core.task import Task
from kzoo.core.tokenizer import Tokenizer
from kzoo.presets import MissingWeightsError, PresetError
from text_testing import registered


# ----------------------------------------------------------------------
# Names and folders
# ----------------------------------------------------------------------
@pytest.mark.parametrize("reference,error,phrase", [
    (5, PresetError, r"name or a folder path.*int"),
    (None, PresetError, r"name or a folder path.*NoneType"),
    ("", PresetError, "Unknown preset ''"),
    ("bert_bsae", PresetError, "Did you mean.*bert_base"),
    ("gpt3_base_en", PresetError, "Unknown preset 'gpt3_base_en'"),
    ("no/such/folder", PresetError, "does not exist"),
    ("hf://", PresetError, "not a Hugging Face reference"),
    ("hf://no-slash", PresetError, "not a Hugging Face reference"),
    ("hf://org/name@../../etc", PresetError, "not a Hugging Face reference"),
], ids=["an_int", "none", "empty", "typo", "unknown", "missing_folder",
        "hf_empty", "hf_no_slash", "hf_bad_revision"])
def test_bad_preset_reference(reference, error, phrase):
    with pytest.raises(error, match=phrase):
        presets.resolve(reference)


@pytest.mark.parametrize("cls", registered(Backbone) + registered(Task)
                         + registered(Tokenizer), ids=lambda c: c.__name__)
def test_every_from_preset_refuses_an_unknown_name(cls):
    with pytest.raises(PresetError, match="Unknown preset 'no_such_model'"):
        cls.from_preset("no_such_model")


def test_empty_folder(tmp_path):
    with pytest.raises(PresetError, match="not a preset folder"):
        kzoo.BertBackbone.from_preset(tmp_path)


def test_preset_of_another_class(bert_tiny_preset, tmp_path):
    folder = tmp_path / "preset"
    shutil.copytree(bert_tiny_preset, folder)
    with pytest.raises(ValueError, match="is not a GPT2Backbone"):
        kzoo.GPT2Backbone.from_preset(folder, load_weights=False)
    entry = json.loads((folder / "config.json").read_text())
    entry["class_name"] = "os.system"
    (folder / "config.json").write_text(json.dumps(entry))
    with pytest.raises(ValueError, match="Unknown kzoo class 'os.system'"):
        kzoo.BertBackbone.from_preset(folder, load_weights=False)


@pytest.mark.parametrize("filename,load", [
    ("tokenizer.json", lambda f: kzoo.BertTokenizer.from_preset(f)),
    ("preprocessor.json", lambda f: kzoo.BertPreprocessor.from_preset(f)),
    ("task.json", lambda f: kzoo.BertTextClassifier.from_preset(f)),
    ("metadata.json", lambda f: presets.resolve(f)),
], ids=["tokenizer", "preprocessor", "task", "metadata"])
def test_corrupt_preset_file(filename, load, bert_tiny_preset, tmp_path):
    folder = tmp_path / "preset"
    shutil.copytree(bert_tiny_preset, folder)
    (folder / filename).write_text('{"class_name": "BertTokenizer", ')
    with pytest.raises(PresetError) as error:
        load(folder)
    message = str(error.value)
    assert f"{folder / filename} is not valid JSON" in message
    assert "line 1, column" in message and "save the preset again" in message


def test_missing_weights_offline(monkeypatch, tmp_path):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(MissingWeightsError, match=r"(?s)No weights for "
                       r"preset 'bert_tiny_en_uncased'.*load_weights=False"):
        kzoo.BertBackbone.from_preset("bert_tiny_en_uncased")


def test_hf_reference_offline_with_nothing_cached(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(MissingWeightsError,
                       match=r"(?s)hf://org/model.*KZOO_OFFLINE"):
        kzoo.BertBackbone.from_preset("hf://org/model")


# ----------------------------------------------------------------------
# Conversion
# ----------------------------------------------------------------------
BERT_CONFIG = {
    "model_type": "bert", "architectures": ["BertModel"], "vocab_size": 100,
    "hidden_size": 16, "num_hidden_layers": 1, "num_attention_heads": 2,
    "intermediate_size": 32, "max_position_embeddings": 64,
    "type_vocab_size": 2, "hidden_act": "gelu", "layer_norm_eps": 1e-12,
    "hidden_dropout_prob": 0.1, "attention_probs_dropout_prob": 0.1,
    "initializer_range": 0.02}


def hf_folder(tmp_path, config=None, weights=True):
    folder = tmp_path / "hf"
    folder.mkdir()
    if config is not None:
        (folder / "config.json").write_text(
            config if isinstance(config, str) else json.dumps(config))
    if weights:
        # A valid, empty safetensors file: header length, then "{}".
        (folder / "model.safetensors").write_bytes(
            struct.pack("<Q", 2) + b"{}")
    return folder


@pytest.mark.parametrize("make,phrase", [
    (lambda t: t / "nowhere", "is not a folder|does not exist"),
    (lambda t: hf_folder(t), r"config.json does not exist"),
    (lambda t: hf_folder(t, "{not json"),
     r"config.json is not valid JSON.*Download the checkpoint's files "
     "again"),
    (lambda t: hf_folder(t, {"model_type": "unheard_of"}),
     r"unheard_of"),
    (lambda t: hf_folder(t, {"model_type": "bert"}, weights=False),
     "holds no weights|no weights"),
    (lambda t: hf_folder(t, {**BERT_CONFIG, "num_hidden_layers": -2}),
     r"num_layers must be a positive integer; got -2.*from the checkpoint's "
     r"config.json.*read from its field 'num_hidden_layers'"),
    (lambda t: hf_folder(t, {**BERT_CONFIG, "num_attention_heads": 3}),
     r"hidden_dim \(16\) must be divisible by num_heads \(3\).*read "
     r"from its field 'hidden_size'"),
], ids=["missing_folder", "no_config", "corrupt_config",
        "unknown_model_type", "no_weights", "negative_layers",
        "heads_do_not_divide"])
def test_hf_to_preset_bad_folder(make, phrase, tmp_path):
    with pytest.raises(ConversionError, match=phrase):
        hf_to_preset(make(tmp_path), tmp_path / "out", verbose=False)
    assert not (tmp_path / "out").exists()  # nothing half-written


def test_export_hf_bad_model(tmp_path):
    with pytest.raises(PresetError, match="Unknown preset 'no_such_preset'"):
        export_hf("no_such_preset", tmp_path / "out", verbose=False)
    with pytest.raises(ConversionError, match="No Hugging Face exporter"):
        export_hf(5, tmp_path / "out", verbose=False)


# ----------------------------------------------------------------------
# The kzoo command
# ----------------------------------------------------------------------
@pytest.mark.parametrize("argv,phrase", [
    (["presets", "--family", "brt"], "no presets of family 'brt'.*bert"),
    (["convert", "no/such/folder", "out"], "kzoo convert: error:"),
    (["convert", "hf://no-slash", "out"], "not a Hugging Face reference"),
    (["convert", "no_such_preset", "out", "--to", "hf"],
     "Unknown preset 'no_such_preset'"),
], ids=["unknown_family", "convert_missing_folder", "convert_bad_hf",
        "export_unknown_preset"])
def test_cli_errors_are_one_line(argv, phrase, capsys, tmp_path,
                                 monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    assert cli.main(argv) == 1
    err = capsys.readouterr().err
    assert "Traceback" not in err
    assert __import__("re").search(phrase, err), err


@pytest.mark.parametrize("argv", [["nonsense"], ["convert"],
                                  ["convert", "a", "b", "--to", "onnx"]],
                         ids=["unknown_command", "missing_args",
                              "bad_choice"])
def test_cli_usage_errors(argv, capsys):
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    assert exit_.value.code == 2
    assert "usage: kzoo" in capsys.readouterr().err
