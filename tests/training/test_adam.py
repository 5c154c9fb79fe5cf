"""kzoo's Adam and AdamW give Keras' numbers on every backend (on torch as
torch's fused kernel, once per weight-decay group per step; on TensorFlow
as its ResourceApplyAdam), and the same numbers on every backend where an
embedding's gradient repeats a row, which Keras' TensorFlow Adam does
not."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import random_bert_inputs, to_numpy
from kzoo import training
# Keras' own exclusion by name, which kzoo's AdamW must keep honouring.
NO_DECAY = ["bias", "gamma", "beta"]

VOCAB = 64


def _classifier():
    keras.utils.set_random_seed(0)
    backbone = kzoo.BertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16, dropout=0.0,
        attention_dropout=0.0)
    return kzoo.BertTextClassifier(backbone, num_classes=2, dropout=0.0)


def _dense_model():
    # Dense gradients only: Keras' own update is the reference on every
    # backend (its TensorFlow Adam mishandles repeated embedding rows;
    # see the last test).
    keras.utils.set_random_seed(0)
    return keras.Sequential([
        keras.Input((6,)), keras.layers.Dense(8, activation="tanh"),
        keras.layers.LayerNormalization(), keras.layers.Dense(2)])


def _train(optimizer, steps=4, model=None):
    """Weights and optimizer variables after `steps` steps from the same
    start, on the same batches."""
    task = model or _classifier()
    # Eager: the update is the same as in a compiled step, and tracing
    # eight small models would cost TensorFlow most of a minute.
    task.compile(optimizer=optimizer, run_eagerly=True,
                 loss=keras.losses.SparseCategoricalCrossentropy(
                     from_logits=True))
    rng = np.random.default_rng(0)
    for step in range(steps):
        if model is None:
            x = random_bert_inputs(batch=4, seq=6, vocabulary_size=VOCAB,
                                   seed=step)
        else:
            x = rng.normal(size=(4, 6)).astype("float32")
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
    our_weights, our_slots = _train(make(ours), model=_dense_model())
    weights, slots = _train(make(theirs), model=_dense_model())
    # Same variables in the same order (so the same saved state), and the
    # same values to float rounding.
    assert len(our_slots) == len(slots)
    for ours_value, value in zip(our_weights + our_slots, weights + slots):
        np.testing.assert_allclose(ours_value, value, rtol=1e-5, atol=1e-6)
    # The steps moved the weights: the comparison is not of two no-ops.
    start = [to_numpy(v.value) for v in _dense_model().weights]
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


def test_repeated_embedding_rows_give_the_same_numbers_on_every_backend():
    # An id twice in a batch: TensorFlow's gradient for the embedding is
    # IndexedSlices with that row twice. Adam must square the summed
    # gradient (as JAX and torch do; Keras' TensorFlow Adam squares each
    # slice, and moves the row elsewhere). Reference: Adam by hand.
    ids, target, lr = np.array([[1, 1, 2]]), 1.0, 0.1
    table = np.arange(10.0).reshape(5, 2) / 10
    kernel = np.array([[0.5], [-0.3], [0.2], [0.1], [-0.4], [0.6]])
    model = keras.Sequential([
        keras.Input((3,), dtype="int32"), keras.layers.Embedding(5, 2),
        keras.layers.Flatten(), keras.layers.Dense(1)])
    model.set_weights([table, kernel, np.zeros(1)])
    model.compile(optimizer=training.Adam(lr), loss="mse")
    weights = [table, kernel, np.zeros(1)]
    moments = [[np.zeros_like(w), np.zeros_like(w)] for w in weights]
    for step in range(1, 3):
        model.train_on_batch(ids, np.array([[target]]))
        table, kernel, bias = weights
        flat = table[ids[0]].reshape(-1)
        d_out = 2 * (flat @ kernel[:, 0] + bias[0] - target)
        d_table = np.zeros_like(table)
        np.add.at(d_table, ids[0], (kernel[:, 0] * d_out).reshape(3, 2))
        grads = [d_table, (flat * d_out)[:, None], np.array([d_out])]
        alpha = lr * np.sqrt(1 - 0.999 ** step) / (1 - 0.9 ** step)
        for weight, grad, (m, v) in zip(weights, grads, moments):
            m += (grad - m) * 0.1
            v += (grad ** 2 - v) * 0.001
            weight -= alpha * m / (np.sqrt(v) + 1e-7)
    for ours, expected in zip(model.get_weights(), weights):
        np.testing.assert_allclose(ours, expected, rtol=1e-5, atol=1e-6)
