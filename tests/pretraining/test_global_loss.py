"""One loss however a step's batch is split (issue 47, item 7;
kzoo/training/global_loss.py): with gradient accumulation a pretraining
step is the 1-batch step, even when its micro-batches hold different
numbers of masked tokens, and the clip (BERT's 1.0) applies to the
step's gradient. In each backend's pass, through the run's own engine
(`Engine.prepare`, `Engine.feed(..., training=True)`) and optimizer
(`make_optimizer`): per-step losses and final weights of 2 micro-batches
x 2 rows equal those of 1 batch of 4 rows within 1e-6.

The N-process equality (torch DDP, tf.distribute over 2 processes and 2
devices, JAX over 2 processes) with the same uneven masks is
test_distributed_pretraining.py's.
"""

import keras
import numpy as np
import pytest

from helpers import make_tiny_bert
from kzoo.pretraining.engines import Engine
from kzoo.training import global_loss, make_optimizer

TOLERANCE = 1e-6
ROWS, LENGTH, SLOTS, STEPS, VOCABULARY = 4, 12, 4, 2, 64
# Masks a row: each step's first two rows (the first micro-batch) hold 2
# masks, the last two 7 (a mean of micro-batch means weighs the 2 masks
# as much as the 7).
REAL_MASKS = (1, 1, 4, 3)


def batches():
    """STEPS global batches of ROWS rows, (x, y, mask weights)."""
    rng = np.random.default_rng(0)
    made = []
    for _ in range(STEPS):
        ids = rng.integers(5, VOCABULARY, (ROWS, LENGTH)).astype("int32")
        positions = np.sort(np.stack([
            rng.choice(np.arange(1, LENGTH - 1), SLOTS, replace=False)
            for _ in range(ROWS)]), axis=1).astype("int32")
        labels = np.take_along_axis(ids, positions, axis=1)
        weights = np.zeros((ROWS, SLOTS), "float32")
        for row, real in enumerate(REAL_MASKS):
            weights[row, :real] = 1.0
            ids[row, positions[row, :real]] = 4  # [MASK]
        x = {"token_ids": ids, "segment_ids": np.zeros_like(ids),
             "padding_mask": np.ones_like(ids), "mask_positions": positions}
        made.append((x, labels, weights))
    return made


def split(batch, parts):
    x, y, w = batch
    size = ROWS // parts
    return [({k: v[i * size:(i + 1) * size] for k, v in x.items()},
             y[i * size:(i + 1) * size], w[i * size:(i + 1) * size])
            for i in range(parts)]


class StepLosses(keras.callbacks.Callback):
    """Each optimizer step's loss, from Keras' running mean of the batch
    losses (as kzoo.pretraining.callbacks.RunMetrics recovers it)."""

    def __init__(self, accumulation):
        super().__init__()
        self.accumulation, self.losses = accumulation, []
        self._micro, self._mean = [], 0.0

    def on_epoch_begin(self, epoch, logs=None):
        self._mean = 0.0  # Keras' running mean starts over each epoch

    def on_train_batch_end(self, batch, logs=None):
        mean = float(logs["loss"])
        self._micro.append((batch + 1) * mean - batch * self._mean)
        self._mean = mean
        if len(self._micro) == self.accumulation:
            self.losses.append(sum(self._micro) / self.accumulation)
            self._micro = []


def tiny_task():
    """A dropout-free 2-layer BertMaskedLM (the same draws each call)."""
    import kzoo
    keras.utils.set_random_seed(1)
    return kzoo.BertMaskedLM(
        backbone=make_tiny_bert(vocabulary_size=VOCABULARY, dropout=0.0,
                                attention_dropout=0.0),
        preprocessor=None)


def train(initial, accumulation, counted=True):
    """STEPS optimizer steps from `initial` weights, each step's batch in
    `accumulation` micro-batches; per-step losses and final weights."""
    task = tiny_task()
    task.compile(optimizer=make_optimizer(
        "adamw", 1e-3, weight_decay=0.01, clip_norm=1.0,
        gradient_accumulation_steps=accumulation if accumulation > 1
        else None))
    task.optimizer.build(task.trainable_variables)
    task.set_weights(initial)
    micro = [part for batch in batches()
             for part in split(batch, accumulation)]
    engine = Engine()
    if counted:
        task = engine.prepare(task)
        data = engine.feed(lambda: (b for b in micro), training=True)
    else:  # Keras' own: a mean of the micro-batches' means
        data = (b for b in micro)
    steps = StepLosses(accumulation)
    # One optimizer step an "epoch" (as a run's checkpoint interval):
    # the running mean the step losses are recovered from starts over.
    keras.Model.fit(task, data, steps_per_epoch=accumulation, epochs=STEPS,
                    verbose=0, shuffle=False, callbacks=[steps])
    return steps.losses, [np.array(w, np.float64) for w in task.get_weights()]


def largest_difference(a, b):
    return max(float(np.max(np.abs(np.subtract(x, y)))) if np.size(x)
               else 0.0 for x, y in zip(a, b))


def test_accumulated_micro_batches_train_the_one_batch_step():
    initial = tiny_task().get_weights()
    one_losses, one_weights = train(initial, 1)
    two_losses, two_weights = train(initial, 2)
    # Relative for the losses (float32 values near 4: 1e-6 is ~8 ulp).
    loss_gap = largest_difference(one_losses, two_losses) / max(one_losses)
    weight_gap = largest_difference(one_weights, two_weights)
    moved = largest_difference(one_weights, initial)
    print(f"{keras.backend.backend()}: accumulation 2 vs 1 batch: loss "
          f"(relative) {loss_gap:.3g}, weights {weight_gap:.3g} (moved "
          f"{moved:.3g})")
    assert len(one_losses) == len(two_losses) == STEPS
    assert moved > 100 * TOLERANCE
    assert loss_gap <= TOLERANCE and weight_gap <= TOLERANCE


@pytest.mark.once
def test_count_steps_counts_each_step_over_its_micro_batches():
    micro = [part for batch in batches()[:2] for part in split(batch, 2)]
    counted = list(global_loss.count_steps(iter(micro), 2))
    assert len(counted) == 4
    for index, (x, y, weights) in enumerate(counted):
        assert x is micro[index][0]
        np.testing.assert_array_equal(weights[global_loss.WEIGHTS],
                                      micro[index][2])
        (counts,) = weights[global_loss.COUNTS]
        # The step's 9 masks in row 0 (sums over any rows' split to the
        # whole count), whichever micro-batch of the step.
        np.testing.assert_array_equal(counts, [sum(REAL_MASKS), 0.0])
    # An incomplete step is not fed (its count would be short).
    assert len(list(global_loss.count_steps(iter(micro[:3]), 2))) == 2
