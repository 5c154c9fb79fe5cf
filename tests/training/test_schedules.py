"""The default fine-tuning recipe: linear warmup over 10% of the steps,
then linear decay to 0, spanning exactly the steps each `fit` takes."""

import keras
import numpy as np
import pytest

import kzoo
from kzoo.training import WarmupLinearDecay


def _value(schedule, step):
    return float(keras.ops.convert_to_numpy(schedule(step)))


# Parity with `transformers`: one backend's pass (docs/design.md, "Time
# budget").
@pytest.mark.once
@pytest.mark.parametrize("total,warmup_fraction", [(100, 0.1), (7, 0.1),
                                                   (40, 0.0), (33, 0.25)])
def test_schedule_equals_transformers(total, warmup_fraction):
    import torch
    import transformers
    schedule = WarmupLinearDecay(2e-5, warmup_fraction)
    schedule.plan(total, start_step=0)
    parameter = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([parameter], lr=2e-5)
    reference = transformers.get_linear_schedule_with_warmup(
        optimizer, int(warmup_fraction * total), total)
    for step in range(total + 3):
        expected = reference.get_last_lr()[0]
        np.testing.assert_allclose(_value(schedule, step), expected,
                                   rtol=1e-5, atol=1e-12, err_msg=str(step))
        optimizer.step()
        reference.step()


def test_unplanned_schedule_is_constant_and_config_round_trips():
    schedule = WarmupLinearDecay(3e-5)
    assert _value(schedule, 0) == pytest.approx(3e-5)
    assert _value(schedule, 10_000) == pytest.approx(3e-5)
    schedule.plan(50, start_step=10)
    again = WarmupLinearDecay.from_config(schedule.get_config())
    assert _value(again, 10 + 5) == pytest.approx(_value(schedule, 15))
    with pytest.raises(ValueError, match="warmup_fraction"):
        WarmupLinearDecay(1e-5, warmup_fraction=1.0)


def _classifier():
    backbone = kzoo.BertBackbone(
        vocabulary_size=64, num_layers=1, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16)
    return kzoo.BertTextClassifier(backbone, num_classes=2)


def _data(n):
    rng = np.random.default_rng(0)
    x = {"token_ids": rng.integers(5, 64, (n, 6)).astype("int32"),
         "segment_ids": np.zeros((n, 6), "int32"),
         "padding_mask": np.ones((n, 6), "int32")}
    return x, rng.integers(0, 2, n)


def test_each_fit_warms_up_and_decays_over_its_own_steps():
    task = _classifier()
    x, y = _data(20)
    task.fit(x, y, batch_size=4, epochs=2, verbose=0)
    schedule = task.optimizer._learning_rate
    assert (schedule.total_steps, schedule.start_step) == (10, 0)
    assert int(task.optimizer.iterations.numpy()) == 10
    # Warmup peaks at 10% of the steps; the last step ends at 0.
    assert _value(schedule, 1) == pytest.approx(5e-5)
    assert _value(schedule, 10) == 0.0

    # A second fit plans again (5 steps from step 10) and really trains:
    # with the first plan's constants its learning rate would be 0.
    before = [np.array(v.numpy()) for v in task.trainable_weights]
    task.fit(x, y, batch_size=4, epochs=1, verbose=0)
    assert (schedule.total_steps, schedule.start_step) == (5, 10)
    after = [np.array(v.numpy()) for v in task.trainable_weights]
    assert any(not np.array_equal(a, b) for a, b in zip(before, after))


def test_raw_text_fit_plans_from_the_dataset(bert_tokenizer):
    backbone = kzoo.BertBackbone(
        vocabulary_size=bert_tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=8, intermediate_dim=16,
        max_sequence_length=16)
    preprocessor = kzoo.BertPreprocessor(bert_tokenizer, sequence_length=8)
    task = kzoo.BertTextClassifier(backbone, num_classes=2,
                                   preprocessor=preprocessor)
    texts = [f"text number {i}" for i in range(9)]
    task.fit(texts, [i % 2 for i in range(9)], batch_size=4, epochs=3,
             verbose=0)
    assert task.optimizer._learning_rate.total_steps == 9  # 3 batches x 3


def test_a_users_optimizer_is_left_alone():
    task = _classifier()
    task.compile(optimizer=keras.optimizers.SGD(0.1))
    x, y = _data(8)
    task.fit(x, y, batch_size=4, verbose=0)
    assert float(keras.ops.convert_to_numpy(
        task.optimizer.learning_rate)) == pytest.approx(0.1)
