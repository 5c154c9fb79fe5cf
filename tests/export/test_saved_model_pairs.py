"""Exports remember their inputs: a classifier trained on sentence pairs
exports a two-text raw-text endpoint by default (before, one text unless
`export(num_texts=2)`: an NLI model served `[CLS] premise [SEP]` and
answered plausibly and wrongly). Served by plain TensorFlow in a fresh
interpreter that never imports kzoo, it gives `predict`'s outputs on the
pairs; the preprocessor's memory survives a config round trip (presets,
`.keras`)."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

import kzoo
from test_saved_model import LOADER, _as_dict

PREMISES = ["A man plays a guitar on stage.", "Two dogs run in a park.",
            "A woman reads a book."]
HYPOTHESES = ["Someone makes music.", "The animals are asleep.",
              "A person is reading."]


@pytest.mark.skipif(keras.backend.backend() == "torch",
                    reason="torch cannot export (test_saved_model.py)")
def test_pair_classifier_serves_pairs_by_default(tmp_path):
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=3, sequence_length=24,
        load_weights=False)
    classifier.fit((PREMISES, HYPOTHESES), [0, 2, 0], batch_size=3,
                   epochs=1, verbose=0)
    restored = kzoo.BertTextClassifier.from_config(classifier.get_config())
    assert restored.preprocessor.num_texts == 2
    classifier.export(tmp_path / "nli", verbose=False)  # no num_texts
    inputs = {"first_texts": PREMISES, "second_texts": HYPOTHESES}
    (tmp_path / "cases.json").write_text(json.dumps(
        {"nli": {"path": str(tmp_path / "nli"), "inputs": inputs}}))
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "KERAS_BACKEND")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    run = subprocess.run(
        [sys.executable, "-c", LOADER, str(tmp_path / "cases.json"),
         str(tmp_path / "results.json")], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results["imported"] == []  # neither kzoo nor keras-hub
    expected = _as_dict(classifier.predict((PREMISES, HYPOTHESES),
                                           verbose=0))
    for key, value in expected.items():
        np.testing.assert_allclose(np.asarray(results["nli"][key]), value,
                                   atol=1e-5, rtol=0)


def test_num_texts_is_checked():
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_tiny_en_uncased")
    assert preprocessor.serving_text_names() == ("texts",)
    preprocessor((["a"], ["b"]))
    assert preprocessor.serving_text_names() == ("first_texts",
                                                 "second_texts")
    assert preprocessor.get_config()["num_texts"] == 2
    with pytest.raises(ValueError, match="num_texts must be an integer "
                                         "from 1 to 2"):
        kzoo.BertPreprocessor(preprocessor.tokenizer, 16, num_texts=3)
