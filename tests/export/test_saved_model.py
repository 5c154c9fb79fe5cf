"""Tasks exported as TensorFlow SavedModels that take raw strings
(`Task.export`, `kzoo.core.export`): a text classifier (WordPiece, and
byte-level BPE: RoBERTa's), a token classifier, a question answerer and a
text embedder, each loaded with
`tf.saved_model.load` in a fresh interpreter that never imports kzoo (nor
keras-hub), give what `predict` gives (<= 1e-5). TensorFlow and JAX
export; torch refuses with an error that names the way out."""

import json
import os
import subprocess
import sys

import keras
import numpy as np
import pytest

import kzoo
from kzoo.core.export import ExportError
from text_testing import make_task, tiny_backbone

PRESET = "bert_tiny_en_uncased"
TEXTS = ["A fine film, truly.", "Dull and slow; I left early!",
         "Mr. Darcy walked in."]
QUESTIONS = ["Who walked in?", "What was slow?", "Where?"]
CONTEXTS = ["Mr. Darcy walked in at noon.", "The film was dull and slow.",
            "They met in Bath, at the Pump Room."]

# Runs in a fresh interpreter: TensorFlow and tf-text (its ops hold the
# tokenizers) only. Reads the cases, writes each endpoint's outputs.
LOADER = r"""
import json, sys
import numpy as np
import tensorflow as tf
import tensorflow_text  # noqa: F401  registers the tokenizers' ops
cases = json.load(open(sys.argv[1]))
results = {}
for name, case in cases.items():
    served = tf.saved_model.load(case["path"])
    inputs = {key: tf.constant(value) for key, value in case["inputs"].items()}
    outputs = served.serve(**inputs)
    # serving_default (TensorFlow Serving's) is the same raw-text endpoint.
    default = served.signatures["serving_default"](**inputs)
    outputs = outputs if isinstance(outputs, dict) else {"output_0": outputs}
    results[name] = {key: np.asarray(value).tolist()
                     for key, value in outputs.items()}
    results[name + "/default"] = {key: np.asarray(value).tolist()
                                  for key, value in default.items()}
results["imported"] = sorted(m for m in ("kzoo", "keras_hub")
                             if m in sys.modules)
json.dump(results, open(sys.argv[2], "w"))
"""


def _tasks():
    """(name, task, raw inputs of the `serve` endpoint, predict's output)."""
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=3, sequence_length=16, load_weights=False)
    tagger = kzoo.TokenClassifier.from_preset(
        PRESET, label_names=["O", "B-PER", "I-PER"], sequence_length=16,
        load_weights=False)
    answerer = kzoo.QuestionAnswerer.from_preset(
        PRESET, sequence_length=32, load_weights=False)
    embedder = kzoo.BertTextEmbedder.from_preset(
        PRESET, sequence_length=16, load_weights=False)
    # Byte-level BPE (kzoo's graph, its tables in the archive): a paragraph
    # break before a word, and <mask>, which swallows the space before it.
    bpe_texts = TEXTS[:2] + ["Mr. Darcy\n\nwalked <mask> in."]
    roberta = make_task(kzoo.RobertaTextClassifier,
                        backbone=tiny_backbone(kzoo.RobertaBackbone),
                        num_classes=2)
    words = [text.split() for text in TEXTS]
    return [
        # Sentence pairs (num_texts=2); the embedder takes one text.
        ("classifier", classifier, {"first_texts": TEXTS,
                                    "second_texts": QUESTIONS},
         classifier.predict((TEXTS, QUESTIONS), verbose=0)),
        ("tagger", tagger, {"sentences": TEXTS},
         tagger.predict(words, verbose=0)),
        ("answerer", answerer, {"questions": QUESTIONS,
                                "contexts": CONTEXTS},
         answerer.predict((QUESTIONS, CONTEXTS), verbose=0)),
        ("embedder", embedder, {"texts": TEXTS},
         embedder.predict(TEXTS, verbose=0)),
        ("roberta_classifier", roberta, {"texts": bpe_texts},
         roberta.predict(bpe_texts, verbose=0)),
    ]


def _as_dict(outputs):
    if isinstance(outputs, dict):
        return {key: keras.ops.convert_to_numpy(value)
                for key, value in outputs.items()}
    return {"output_0": keras.ops.convert_to_numpy(outputs)}


@pytest.mark.skipif(keras.backend.backend() == "torch",
                    reason="torch cannot export (test_torch_refuses)")
def test_served_raw_text_equals_predict(tmp_path):
    cases, expected = {}, {}
    for name, task, inputs, outputs in _tasks():
        path = tmp_path / name
        task.export(path, verbose=False, num_texts=len(inputs))
        cases[name] = {"path": str(path), "inputs": inputs}
        expected[name] = _as_dict(outputs)
    (tmp_path / "cases.json").write_text(json.dumps(cases))
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "KERAS_BACKEND")}
    env["TF_CPP_MIN_LOG_LEVEL"] = "3"
    run = subprocess.run(
        [sys.executable, "-c", LOADER, str(tmp_path / "cases.json"),
         str(tmp_path / "results.json")], cwd=tmp_path, env=env,
        capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-3000:]
    results = json.loads((tmp_path / "results.json").read_text())
    assert results.pop("imported") == []  # neither kzoo nor keras-hub
    worst = {}
    for name, outputs in expected.items():
        served = results[name]
        assert sorted(served) == sorted(outputs), name
        for key, value in outputs.items():
            got = np.asarray(served[key], "float32")
            assert got.shape == value.shape, (name, key)
            worst[name] = max(worst.get(name, 0.0),
                              float(np.max(np.abs(got - value))))
            np.testing.assert_allclose(got, value, atol=1e-5, rtol=0,
                                       err_msg=f"{name} {key}")
        default = results[name + "/default"]
        for key, value in outputs.items():
            np.testing.assert_allclose(np.asarray(default[key], "float32"),
                                       value, atol=1e-5, rtol=0)
    # Shown with pytest -s (the numbers docs/serving.md quotes).
    print(f"{keras.backend.backend()} max abs difference from predict: "
          + ", ".join(f"{name} {value:.1e}" for name, value in worst.items()))


@pytest.mark.skipif(keras.backend.backend() != "torch",
                    reason="the backends that export are tested above")
def test_torch_refuses_with_the_way_out(tmp_path):
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=2, sequence_length=8, load_weights=False)
    with pytest.raises(ExportError, match="KERAS_BACKEND=tensorflow"
                       r" \(or jax\)"):
        classifier.export(tmp_path / "model", verbose=False)
    assert not (tmp_path / "model").exists()


@pytest.mark.once
def test_a_preprocessor_that_draws_is_refused(tmp_path):
    # Before the backend is asked: the same error on every backend.
    masked_lm = kzoo.BertMaskedLM.from_preset(
        PRESET, sequence_length=8, load_weights=False)
    with pytest.raises(ExportError, match="draws anew on every call"):
        masked_lm.export(tmp_path / "model", verbose=False)
    assert not (tmp_path / "model").exists()


@pytest.mark.once
def test_a_folder_of_other_files_is_left_alone(tmp_path):
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=2, sequence_length=8, load_weights=False)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "notes.txt").write_text("mine")
    for destination in (tmp_path / "project",
                        tmp_path / "project" / "notes.txt"):
        with pytest.raises(ExportError, match="folder of other files"):
            classifier.export(destination, verbose=False)
    assert (tmp_path / "project" / "notes.txt").read_text() == "mine"
