"""Classifier heads honour Hugging Face's `problem_type`: a regression
checkpoint (num_labels=1) trains with MSE, a multi-label one with sigmoid
cross-entropy, each loss equal to `transformers`' on the same batch; a
one-class softmax is refused."""

import keras
import numpy as np
import pytest

import kzoo
from kzoo.convert import export_hf
from kzoo.utils.skip_init import initial_values_skipped

from convert_helpers import make_hf_bert, random_inputs, save_hf

import torch
import transformers

CASES = {
    # name: (HF config overrides, expected problem_type, labels maker)
    "regression": (dict(num_labels=1), "regression",
                   lambda rng: rng.normal(size=(3, 1)).astype("float32")),
    "stated_regression": (dict(num_labels=2, problem_type="regression"),
                          "regression",
                          lambda rng: rng.normal(size=(3, 2)).astype(
                              "float32")),
    "multi_label": (dict(num_labels=4,
                         problem_type="multi_label_classification"),
                    "multi_label_classification",
                    lambda rng: rng.integers(0, 2, (3, 4)).astype(
                        "float32")),
    "single_label": (dict(num_labels=3), "single_label_classification",
                     lambda rng: rng.integers(0, 3, (3,)).astype("int64")),
}


# Parity with `transformers`: one backend's pass (docs/design.md, "Time
# budget").
@pytest.mark.once
@pytest.mark.parametrize("case", sorted(CASES))
def test_loss_equals_transformers(case, tmp_path):
    overrides, problem_type, make_labels = CASES[case]
    hf_model = make_hf_bert("BertForSequenceClassification", **overrides)
    folder = save_hf(hf_model, tmp_path / "hf")
    task = kzoo.BertTextClassifier.from_preset(str(folder), preprocessor=None)
    assert task.problem_type == problem_type
    assert task.num_classes == hf_model.config.num_labels

    inputs = random_inputs(hf_model.config, batch=3)
    labels = make_labels(np.random.default_rng(0))
    with torch.no_grad():
        expected = float(hf_model(
            input_ids=torch.tensor(inputs["token_ids"]).long(),
            token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
            attention_mask=torch.tensor(inputs["padding_mask"]).long(),
            labels=torch.tensor(labels)).loss)
    task.compile()
    got = float(keras.ops.convert_to_numpy(task.compute_loss(
        x=inputs, y=labels, y_pred=task(inputs), training=False)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)

    # The problem type survives a preset and a Hugging Face export.
    task.save_to_preset(tmp_path / "saved")
    again = kzoo.BertTextClassifier.from_preset(tmp_path / "saved",
                                                preprocessor=None)
    assert again.problem_type == problem_type
    exported = export_hf(task, tmp_path / "out", verbose=False)
    config = transformers.AutoConfig.from_pretrained(exported)
    assert config.problem_type == problem_type
    assert config.num_labels == task.num_classes


@pytest.mark.convergence
def test_regression_head_learns(tiny_bert):
    task = kzoo.BertTextClassifier(tiny_bert, num_classes=1,
                                   problem_type="regression", dropout=0.0)
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(1000, 2000, (16, 8)).astype("int32"),
         "segment_ids": np.zeros((16, 8), "int32"),
         "padding_mask": np.ones((16, 8), "int32")}
    # A real-valued target far from the initial outputs: MSE has something
    # to learn (a one-class softmax's loss would be 0 from the start).
    y = np.full((16, 1), 2.0, "float32")
    # (At 1e-2 a post-LN encoder overshoots once it is near the target.)
    task.compile(optimizer=keras.optimizers.Adam(3e-3))
    history = task.fit(x, y, epochs=8, batch_size=8, verbose=0)
    losses = history.history["loss"]
    assert losses[0] > 1.0 and losses[-1] < 0.25 * losses[0], losses


@pytest.mark.parametrize("cls_name", ["BertTextClassifier", "GPT2Classifier"])
def test_bad_problem_types_are_refused(cls_name):
    cls = getattr(kzoo, cls_name)
    # The values are never used: no random draws (GPT-2's 46M of them took
    # 7 s on jax).
    with initial_values_skipped():
        backbone = cls.backbone_cls.from_preset(
            "bert_tiny" if cls_name.startswith("Bert") else "gpt2",
            load_weights=False, num_layers=1)
    with pytest.raises(ValueError, match="problem_type=\"regression\""):
        cls(backbone, num_classes=1)
    with pytest.raises(ValueError, match="problem_type must be one of"):
        cls(backbone, num_classes=2, problem_type="ranking")
