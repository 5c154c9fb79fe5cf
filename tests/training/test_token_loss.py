"""Token-level losses average over the real tokens of a batch, as the
original BERT and `transformers` do, not over every (possibly empty) slot."""

import keras
import numpy as np
import pytest

import kzoo
from kzoo.training.losses import token_loss

from convert_helpers import make_hf_bert, random_inputs, save_hf


def _batch_with_empty_slots(vocabulary_size, seq, rng):
    """Three rows with 3, 1 and 0 real masks out of 5 slots each."""
    real = [3, 1, 0]
    slots = 5
    positions = np.zeros((len(real), slots), "int32")
    labels = np.zeros((len(real), slots), "int32")
    weights = np.zeros((len(real), slots), "float32")
    for row, count in enumerate(real):
        chosen = rng.choice(np.arange(1, seq), size=count, replace=False)
        positions[row, :count] = np.sort(chosen)
        labels[row, :count] = rng.integers(0, vocabulary_size, count)
        weights[row, :count] = 1.0
    return positions, labels, weights


def test_token_loss_is_the_mean_over_real_tokens():
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(3, 5, 7)).astype("float32")
    labels = rng.integers(0, 7, (3, 5))
    weights = np.array([[1, 1, 1, 0, 0], [1, 0, 0, 0, 0], [0] * 5], "float32")
    log_probs = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    picked = -np.take_along_axis(log_probs, labels[..., None], -1)[..., 0]
    by_hand = (picked * weights).sum() / weights.sum()
    got = float(keras.ops.convert_to_numpy(
        token_loss()(labels, logits, sample_weight=weights)))
    np.testing.assert_allclose(got, by_hand, rtol=1e-5)
    # The old normalisation (every slot) is 15/4 times smaller here.
    assert abs(got - (picked * weights).sum() / weights.size) > 0.1 * got


def test_token_loss_of_a_batch_without_real_tokens_is_zero():
    logits = np.ones((2, 3, 4), "float32")
    loss = token_loss()(np.zeros((2, 3), "int32"), logits,
                        sample_weight=np.zeros((2, 3), "float32"))
    assert float(keras.ops.convert_to_numpy(loss)) == 0.0


@pytest.mark.parametrize("task_name", ["BertMaskedLM", "BertPretrainer"])
def test_mlm_loss_equals_transformers(task_name, tmp_path):
    import torch
    hf_model = make_hf_bert("BertForMaskedLM")
    folder = save_hf(hf_model, tmp_path / "hf")
    task = getattr(kzoo, task_name).from_preset(str(folder),
                                                preprocessor=None)
    inputs = random_inputs(hf_model.config, batch=3, seq=11)
    rng = np.random.default_rng(1)
    positions, labels, weights = _batch_with_empty_slots(
        hf_model.config.vocab_size, 11, rng)

    # transformers: labels over the whole sequence, -100 where not masked.
    hf_labels = np.full(inputs["token_ids"].shape, -100, "int64")
    for row in range(3):
        for slot in np.flatnonzero(weights[row]):
            hf_labels[row, positions[row, slot]] = labels[row, slot]
    with torch.no_grad():
        expected = float(hf_model(
            input_ids=torch.tensor(inputs["token_ids"]).long(),
            token_type_ids=torch.tensor(inputs["segment_ids"]).long(),
            attention_mask=torch.tensor(inputs["padding_mask"]).long(),
            labels=torch.tensor(hf_labels)).loss)

    task.compile()
    x = {**inputs, "mask_positions": positions}
    y_pred = task(x)
    if task_name == "BertPretrainer":
        y, y_pred = {"mlm": labels, "nsp": np.zeros(3, "int32")}, y_pred
        sample_weight = {"mlm": weights, "nsp": np.zeros(3, "float32")}
    else:
        y, sample_weight = labels, weights
    got = float(keras.ops.convert_to_numpy(task.compute_loss(
        x=x, y=y, y_pred=y_pred, sample_weight=sample_weight,
        training=False)))
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
