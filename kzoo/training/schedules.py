"""BERT's learning-rate schedule: linear warmup, then linear decay to 0.

Devlin et al. fine-tuned (and pretrained) with the learning rate rising
linearly from 0 over the first 10% of the steps, then falling linearly to
0 at the last step; `transformers`' `get_linear_schedule_with_warmup` is
the same rule, and this one gives the same number at every step.

The number of steps is rarely known when an optimizer is made; `fit`
knows it. kzoo's tasks therefore leave `total_steps` open and each
`Task.fit` sets the schedule to span that call (`plan`): a second `fit`
warms up and decays again over its own steps. Until a plan is set (or when
`fit` cannot tell how many steps it will run) the rate is constant at its
peak.
"""

import keras
from keras import ops


@keras.saving.register_keras_serializable(package="kzoo")
class WarmupLinearDecay(keras.optimizers.schedules.LearningRateSchedule):
    """`peak * step / warmup` for the first `warmup_fraction` of the steps,
    then `peak * (total - step) / (total - warmup)`, never below 0.

    Args:
        peak: the learning rate at the end of warmup.
        warmup_fraction: share of the steps spent warming up (0.1).
        total_steps: steps in the plan; None: constant `peak`.
        start_step: the optimizer step at which the plan begins.
    """

    def __init__(self, peak, warmup_fraction=0.1, total_steps=None,
                 start_step=0):
        if not 0.0 <= float(warmup_fraction) < 1.0:
            raise ValueError(
                f"warmup_fraction must be in [0, 1); got {warmup_fraction}.")
        if float(peak) <= 0:
            raise ValueError(f"The peak learning rate must be > 0; got "
                             f"{peak}.")
        self.peak = float(peak)
        self.warmup_fraction = float(warmup_fraction)
        self.total_steps = None if total_steps is None else int(total_steps)
        self.start_step = int(start_step)

    def plan(self, total_steps, start_step):
        """Span `total_steps` optimizer steps from `start_step`. Returns
        whether anything changed (a compiled train step must then be
        traced again, since it read the old numbers as constants)."""
        new = (None if total_steps is None else max(1, int(total_steps)),
               int(start_step))
        changed = new != (self.total_steps, self.start_step)
        self.total_steps, self.start_step = new
        return changed

    def warmup_steps(self):
        return int(self.warmup_fraction * self.total_steps)

    def __call__(self, step):
        if self.total_steps is None:
            return ops.convert_to_tensor(self.peak, "float32")
        step = ops.cast(step, "float32") - float(self.start_step)
        total = float(self.total_steps)
        warmup = float(self.warmup_steps())
        rising = step / max(warmup, 1.0)
        falling = (total - step) / max(total - warmup, 1.0)
        factor = ops.where(step < warmup, rising, falling)
        return self.peak * ops.clip(factor, 0.0, 1.0)

    def get_config(self):
        return {"peak": self.peak, "warmup_fraction": self.warmup_fraction,
                "total_steps": self.total_steps,
                "start_step": self.start_step}
