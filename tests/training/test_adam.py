"""kzoo's Adam and AdamW give Keras' numbers on every backend, and on torch
run as torch's fused kernel (once per weight-decay group per step)."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import random_bert_inputs, to_numpy
from kzoo import training

VOCAB = 64
NO_DECAY = ["bias", "gamma", "beta"]


def _classifier():
    keras.utils.set_random_seed(0)
    backbone = kzoo.BertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16, dropout=0.0,
        attention_dropout=0.0)
    return kzoo.BertTextClassifier(backbone, num_classes=2, dropout=0.0)


def _train(optimizer, steps=4):
    """Weights and optimizer variables after `steps` steps from the same
    start, on the same batches."""
    task = _classifier()
    # Eager: the update is the same as in a compiled step, and tracing
    # eight small models would cost TensorFlow most of a minute.
    task.compile(optimizer=optimizer, run_eagerly=True,
                 loss=keras.losses.SparseCategoricalCrossentropy(
                     from_logits=True))
    for step in range(steps):
        x = random_bert_inputs(batch=4, seq=6, vocabulary_size=VOCAB,
                               seed=step)
        task.train_on_batch(x, np.arange(4) % 2)
    return ([to_numpy(v.value) for v in task.weights],
            [to_numpy(v.value) for v in optimizer.variables])


def _exclude(optimizer):
    optimizer.exclude_from_weight_decay(var_names=NO_DECAY)
    return optimizer


CASES = {
    "adamw, decay groups": (
        lambda cls: _exclude(cls(1e-2, weight_decay=0.1)),
        training.AdamW, keras.optimizers.AdamW),
    "adamw, amsgrad, betas": (
        lambda cls: cls(3e-3, beta_1=0.7, beta_2=0.99, epsilon=1e-6,
                        amsgrad=True, weight_decay=0.05),
        training.AdamW, keras.optimizers.AdamW),
    "adam, a schedule": (
        lambda cls: cls(keras.optimizers.schedules.ExponentialDecay(
            1e-2, decay_steps=1, decay_rate=0.5)),
        training.Adam, keras.optimizers.Adam),
    "adam, decoupled decay, clipping": (
        lambda cls: cls(1e-2, weight_decay=0.1, global_clipnorm=0.5),
        training.Adam, keras.optimizers.Adam),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_same_numbers_as_keras(case):
    make, ours, theirs = CASES[case]
    our_weights, our_slots = _train(make(ours))
    weights, slots = _train(make(theirs))
    # Same variables in the same order (so the same saved state), and the
    # same values to float rounding.
    assert len(our_slots) == len(slots)
    for ours_value, value in zip(our_weights + our_slots, weights + slots):
        np.testing.assert_allclose(ours_value, value, rtol=1e-5, atol=1e-6)
    # The steps moved the weights: the comparison is not of two no-ops.
    start = [to_numpy(v.value) for v in _classifier().weights]
    assert max(float(np.max(np.abs(a - b)))
               for a, b in zip(weights, start)) > 1e-3


def test_torch_runs_the_fused_kernel_once_per_decay_group():
    optimizer = _exclude(training.AdamW(1e-3, weight_decay=0.01))
    task = _classifier()
    task.compile(optimizer=optimizer, loss=keras.losses.
                 SparseCategoricalCrossentropy(from_logits=True))
    x = random_bert_inputs(batch=4, seq=6, vocabulary_size=VOCAB)
    task.train_on_batch(x, np.arange(4) % 2)
    on_torch = keras.backend.backend() == "torch"
    assert (optimizer._fused_adamw is not None) == on_torch
    if not on_torch:
        return   # Keras' own update, checked against Keras' above
    kernel, calls = optimizer._fused_adamw, []

    def counting(values, *args, weight_decay, **kwargs):
        calls.append((len(values), weight_decay))
        kernel(values, *args, weight_decay=weight_decay, **kwargs)

    optimizer._fused_adamw = counting
    task.train_on_batch(x, np.arange(4) % 2)
    assert sorted(decay for _, decay in calls) == [0.0, 0.01]
    decayed = sum(n for n, decay in calls if decay)
    assert sum(n for n, _ in calls) == len(task.trainable_weights)
    assert decayed == sum(1 for v in task.trainable_weights
                          if v.name not in NO_DECAY)


def test_layerwise_adamw_at_one_scale_is_adamw_at_the_scaled_rate():
    groups = training.layer_groups(_classifier())
    layerwise = training.LayerwiseAdamW(
        2e-2, layer_groups=groups, scales=[0.5] * len(groups),
        weight_decay=0.1)
    plain = _exclude(training.AdamW(1e-2, weight_decay=0.1))
    for ours, reference in zip(_train(layerwise)[0], _train(plain)[0]):
        np.testing.assert_allclose(ours, reference, rtol=1e-5, atol=1e-6)


def test_config_round_trips_to_the_same_class():
    optimizer = training.AdamW(2e-5, weight_decay=0.02, beta_2=0.98)
    again = keras.optimizers.deserialize(
        keras.optimizers.serialize(optimizer))
    assert type(again) is training.AdamW
    assert again.get_config() == optimizer.get_config()


def test_tasks_train_with_it_by_default():
    assert type(training.default_optimizer()) is training.AdamW
