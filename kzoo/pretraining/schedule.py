"""A pretraining run's learning-rate schedule over its optimizer steps, in
one of the shapes the families' originals used (`SHAPES`):

    linear        linear warmup over `warmup_steps`, then linear decay to
                  0 at `max_steps` (BERT's optimization.py, ALBERT,
                  ELECTRA, RoBERTa's polynomial_decay with power 1)
    cosine        linear warmup, then a half cosine down to `floor` x the
                  peak at `max_steps` (GPT-3: to 10%)
    inverse_sqrt  T5's `1 / sqrt(max(step, warmup))` scaled to the peak:
                  the peak for `warmup_steps` (no ramp), then
                  `peak * sqrt(warmup / step)`
    one_cycle     Cramming's triangle: linear from 0 to the peak at half
                  of `max_steps`, linear back to 0 at the end
    constant      the peak throughout (ELMo's Adagrad, AWD-LSTM's SGD)

It is a `kzoo.training.PlannedSchedule` with its plan fixed: `Task.fit`
re-plans kzoo's schedules to span each `fit` call from the optimizer's
current step, which a resumed run must not do (the rate at step s is the
same whether the run was resumed or not). The rate is a function of the
optimizer's iteration count alone, so it is restored with the optimizer's
variables. Keras hands a schedule the count of batches (with gradient
accumulation, `accumulation` per update); the schedule divides.
`rate_at` is the same rule in Python, for the logs.
"""

import math

import keras
from keras import ops

from kzoo.training import PlannedSchedule

SHAPES = ("linear", "cosine", "inverse_sqrt", "one_cycle", "constant")


@keras.saving.register_keras_serializable(package="kzoo")
class PretrainingSchedule(PlannedSchedule):

    def __init__(self, peak, warmup_steps, total_steps, accumulation=1,
                 shape="linear", floor=0.0):
        if shape not in SHAPES:
            raise ValueError(f"Unknown schedule {shape!r}; pick one of "
                             f"{', '.join(SHAPES)}.")
        super().__init__(peak, total_steps=total_steps)
        self.fixed_warmup_steps = int(warmup_steps)
        self.accumulation = int(accumulation)
        self.shape = shape
        self.floor = float(floor)

    def warmup_steps(self):
        return self.fixed_warmup_steps

    def plan(self, total_steps, start_step):
        # The run's plan (max_steps from step 0) stays whatever `fit` runs.
        return False

    def __call__(self, step):
        step = ops.cast(step, "float32")
        if self.accumulation > 1:
            step = ops.floor(step / float(self.accumulation))
        return self.peak * self.factor(step, float(self.total_steps))

    def factor(self, step, total):
        """The fraction of the peak at optimizer step `step` (a float
        tensor); the same rule as `_factor_at` below, in `keras.ops`."""
        warmup = float(self.fixed_warmup_steps)
        if self.shape == "constant":
            return ops.ones_like(step)
        if self.shape == "inverse_sqrt":
            return ops.sqrt(warmup / ops.maximum(step, max(warmup, 1.0)))
        if self.shape == "one_cycle":
            half = max(total / 2.0, 1.0)
            return ops.clip(ops.where(step < half, step / half,
                                      (total - step) / half), 0.0, 1.0)
        rising = step / max(warmup, 1.0)
        progress = ops.clip((step - warmup) / max(total - warmup, 1.0),
                            0.0, 1.0)
        if self.shape == "cosine":
            falling = self.floor + (1.0 - self.floor) * 0.5 * (
                1.0 + ops.cos(math.pi * progress))
        else:
            falling = 1.0 - progress
        return ops.clip(ops.where(step < warmup, rising, falling), 0.0, 1.0)

    def rate_at(self, step):
        """The rate of optimizer step `step` (from 0), in Python."""
        return self.peak * _factor_at(step, self.fixed_warmup_steps,
                                      self.total_steps, self.shape,
                                      self.floor)

    def get_config(self):
        return {"peak": self.peak, "warmup_steps": self.fixed_warmup_steps,
                "total_steps": self.total_steps,
                "accumulation": self.accumulation, "shape": self.shape,
                "floor": self.floor}


def _factor_at(step, warmup, total, shape, floor):
    warmup, total, step = float(warmup), float(total), float(step)
    if shape == "constant":
        return 1.0
    if shape == "inverse_sqrt":
        return math.sqrt(warmup / max(step, warmup, 1.0))
    if shape == "one_cycle":
        half = max(total / 2.0, 1.0)
        return min(max(step / half if step < half else (total - step) / half,
                       0.0), 1.0)
    if step < warmup:
        return step / max(warmup, 1.0)
    progress = min(max((step - warmup) / max(total - warmup, 1.0), 0.0), 1.0)
    if shape == "cosine":
        return floor + (1.0 - floor) * 0.5 * (1.0 + math.cos(math.pi *
                                                             progress))
    return 1.0 - progress
