"""`kzoo convert SRC DEST` both ways, as a user runs it."""

import json

import numpy as np

import kzoo
from kzoo import cli

from convert_helpers import (
    FakeHub, hf_outputs, make_hf_bert, random_inputs, save_hf)

import transformers


def test_convert_both_ways(tmp_path, capsys):
    hf_model = make_hf_bert("BertForSequenceClassification", "odd36")
    src = save_hf(hf_model, tmp_path / "hf")
    preset = tmp_path / "preset"

    assert cli.main(["convert", str(src), str(preset)]) == 0
    captured = capsys.readouterr()
    assert "Wrote a kzoo preset" in captured.out
    assert "Converting" in captured.err  # the progress line
    assert json.loads((preset / "task.json").read_text())["class_name"] == \
        "BertTextClassifier"
    assert json.loads((preset / "metadata.json").read_text())["labels"] == {
        "0": "LABEL_0", "1": "LABEL_1", "2": "LABEL_2"}
    classifier = kzoo.BertTextClassifier.from_preset(str(preset))
    assert classifier.preprocessor is not None  # tokenizer came along

    # Refuses to overwrite without --overwrite.
    assert cli.main(["convert", str(src), str(preset)]) == 1
    assert "--overwrite" in capsys.readouterr().err

    out = tmp_path / "back"
    assert cli.main(["convert", str(preset), str(out), "--to", "hf"]) == 0
    reloaded = transformers.BertForSequenceClassification.from_pretrained(
        out, attn_implementation="eager").eval()
    inputs = random_inputs(hf_model.config)
    np.testing.assert_array_equal(hf_outputs(reloaded, inputs)["logits"],
                                  hf_outputs(hf_model, inputs)["logits"])
    tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert tokenizer.convert_tokens_to_ids("w7") == 12

    # A backbone-only conversion of the same checkpoint on request.
    backbone_dir = tmp_path / "backbone_only"
    assert cli.main(["convert", str(src), str(backbone_dir), "--task",
                     "backbone", "--quiet"]) == 0
    assert not (backbone_dir / "task.json").exists()
    assert "classifier.weight" in capsys.readouterr().out  # reported unused


def test_convert_from_the_hub_and_errors(tmp_path, monkeypatch, capsys):
    src = save_hf(make_hf_bert("BertModel", "odd20"), tmp_path / "hf")
    hub = FakeHub(tmp_path / "hub")
    try:
        hub.add_repo("kzoo-test/cli-bert", src)
        monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
        monkeypatch.delenv("KZOO_OFFLINE", raising=False)
        dest = tmp_path / "from_hub"
        assert cli.main(["convert", "hf://kzoo-test/cli-bert", str(dest),
                         "--quiet"]) == 0
        source = json.loads((dest / "metadata.json").read_text())["source"]
        assert source["huggingface"] == "kzoo-test/cli-bert"
    finally:
        hub.stop()
    capsys.readouterr()
    assert cli.main(["convert", str(tmp_path / "missing"),
                     str(tmp_path / "x")]) == 1
    assert "error:" in capsys.readouterr().err
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    assert cli.main(["convert", "hf://kzoo-test/other", str(tmp_path / "y")]) == 1
    assert "KZOO_OFFLINE" in capsys.readouterr().err
