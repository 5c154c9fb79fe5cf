"""ONNX on token ids (`export(path, format="onnx")`, `kzoo.core.export`):
a text classifier, a question answerer and a bare backbone, each run in
onnxruntime, give what the model gives (<= 1e-4). The TensorFlow backend
exports with a free batch axis (tf2onnx); torch with every axis fixed
(torch.onnx); otherwise JAX and torch raise `ExportError` naming the
TensorFlow backend."""

import keras
import numpy as np
import pytest

import kzoo
from kzoo.core.export import ExportError

PRESET = "bert_tiny_en_uncased"
TEXTS = ["A fine film, truly.", "Dull and slow; I left early!",
         "Mr. Darcy walked in."]


def _ids(preprocessor, x, names):
    inputs = preprocessor(x)
    return {name: keras.ops.convert_to_numpy(inputs[name]) for name in names}


def _flat(outputs):
    # Dict outputs in sorted-key order, as tf2onnx lists them.
    return [keras.ops.convert_to_numpy(value)
            for value in keras.tree.flatten(outputs)]


@pytest.mark.skipif(keras.backend.backend() != "tensorflow",
                    reason="ONNX exports from TensorFlow (test_refused)")
def test_onnx_runtime_equals_the_model(tmp_path):
    import onnxruntime
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=3, sequence_length=16, load_weights=False)
    answerer = kzoo.QuestionAnswerer.from_preset(
        PRESET, sequence_length=24, load_weights=False)
    backbone = classifier.backbone
    cases = [
        ("classifier", classifier, {},
         _ids(classifier.preprocessor, TEXTS, classifier.input_names)),
        ("answerer", answerer, {},
         _ids(answerer.preprocessor, (["Who?"] * 3, TEXTS),
              answerer.input_names)),
        # A backbone's position table is its length unless told: 16 here.
        ("backbone", backbone, {"input_signature": [{
            name: keras.InputSpec(shape=(None, 16), dtype="int32", name=name)
            for name in backbone.input_names}]},
         _ids(classifier.preprocessor, TEXTS, backbone.input_names)),
    ]
    worst = {}
    for name, model, options, inputs in cases:
        path = tmp_path / f"{name}.onnx"
        model.export(path, format="onnx", verbose=False, **options)
        session = onnxruntime.InferenceSession(
            str(path), providers=["CPUExecutionProvider"])
        assert sorted(i.name for i in session.get_inputs()) == \
            sorted(inputs), name
        got = session.run(None, inputs)
        expected = _flat(model.predict_on_batch(inputs))
        assert len(got) == len(expected), name
        for value, reference in zip(got, expected):
            assert value.shape == reference.shape, name
            np.testing.assert_allclose(value, reference, atol=1e-4, rtol=0,
                                       err_msg=name)
            worst[name] = max(worst.get(name, 0.0),
                              float(np.max(np.abs(value - reference))))
    # Shown with pytest -s (the numbers docs/serving.md quotes).
    print("onnxruntime max abs difference: "
          + ", ".join(f"{name} {value:.1e}" for name, value in worst.items()))


@pytest.mark.skipif(keras.backend.backend() == "tensorflow",
                    reason="TensorFlow exports ONNX (tested above)")
def test_refused_with_the_backend_to_use(tmp_path):
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=2, sequence_length=8, load_weights=False)
    for model in (classifier, classifier.backbone):
        with pytest.raises(ExportError, match="KERAS_BACKEND=tensorflow"):
            model.export(tmp_path / "model.onnx", format="onnx",
                         verbose=False)
    assert not (tmp_path / "model.onnx").exists()


@pytest.mark.skipif(keras.backend.backend() != "torch",
                    reason="torch's exporter, with every axis fixed")
def test_torch_exports_a_fixed_batch(tmp_path):
    import onnxruntime
    classifier = kzoo.BertTextClassifier.from_preset(
        PRESET, num_classes=3, sequence_length=16, load_weights=False)
    inputs = _ids(classifier.preprocessor, TEXTS, classifier.input_names)
    signature = [{name: keras.InputSpec(shape=(3, 16), dtype="int32",
                                        name=name)
                  for name in classifier.input_names}]
    path = tmp_path / "classifier.onnx"
    classifier.export(path, format="onnx", verbose=False,
                      input_signature=signature)
    session = onnxruntime.InferenceSession(
        str(path), providers=["CPUExecutionProvider"])
    got = session.run(None, {i.name: inputs[i.name]
                             for i in session.get_inputs()})
    np.testing.assert_allclose(
        got[0], _flat(classifier.predict_on_batch(inputs))[0], atol=1e-4,
        rtol=0)
