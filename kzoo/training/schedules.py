"""Learning-rate schedules that span each `fit`: BERT's (linear warmup,
then linear decay to 0) and ULMFiT's slanted triangular one.

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

from kzoo.utils import private_apis


class PlannedSchedule(keras.optimizers.schedules.LearningRateSchedule):
    """A schedule over a number of steps that `Task.fit` sets (`plan`):
    each `fit` call runs the whole schedule over its own steps. Until a
    plan is set (or when `fit` cannot tell how many steps it will run) the
    rate is constant at its peak.

    Example:
    ```python
    from kzoo import training
    schedule = training.WarmupLinearDecay(1e-3, warmup_fraction=0.5)
    assert np.isclose(float(schedule(0)), 1e-3)   # no plan yet: the peak
    schedule.plan(total_steps=10, start_step=0)   # what Task.fit does
    assert np.allclose([float(schedule(s)) for s in (0, 5, 10)],
                       [0.0, 1e-3, 0.0])
    ```
    """

    def __init__(self, peak, total_steps=None, start_step=0):
        if float(peak) <= 0:
            raise ValueError(f"The peak learning rate must be > 0; got "
                             f"{peak}.")
        self.peak = float(peak)
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

    def __call__(self, step):
        if self.total_steps is None:
            return ops.convert_to_tensor(self.peak, "float32")
        step = ops.cast(step, "float32") - float(self.start_step)
        return self.peak * self.factor(step, float(self.total_steps))

    def factor(self, step, total):
        """The fraction of the peak at `step` (a float tensor) of `total`."""
        raise NotImplementedError

    def get_config(self):
        return {"peak": self.peak, "total_steps": self.total_steps,
                "start_step": self.start_step}


@keras.saving.register_keras_serializable(package="kzoo")
def planned_schedule_of(optimizer):
    """The kzoo schedule `optimizer` runs (a `PlannedSchedule`), or None:
    a constant rate, or a schedule of the user's, which `fit` leaves as it
    is.

    Keras keeps the schedule in the private `_learning_rate` (its public
    `learning_rate` is the current value; checked on Keras 3.15.1;
    kzoo/utils/private_apis.py). Without it, the schedule is looked for
    among the optimizer's attributes: the same object."""
    if private_apis.has("keras:Optimizer._learning_rate"):
        schedule = getattr(optimizer, "_learning_rate", None)
        return schedule if isinstance(schedule, PlannedSchedule) else None
    return next((value for value in vars(optimizer).values()
                 if isinstance(value, PlannedSchedule)), None)


class WarmupLinearDecay(PlannedSchedule):
    """`peak * step / warmup` for the first `warmup_fraction` of the steps,
    then `peak * (total - step) / (total - warmup)`, never below 0.

    Args:
        peak: the learning rate at the end of warmup.
        warmup_fraction: share of the steps spent warming up (0.1).
        total_steps: steps in the plan; None: constant `peak`.
        start_step: the optimizer step at which the plan begins.

    Example:
    ```python
    from kzoo import training
    schedule = training.WarmupLinearDecay(1e-3, warmup_fraction=0.1,
                                          total_steps=100)
    rates = [float(schedule(step)) for step in (0, 10, 55, 100)]
    assert np.allclose(rates, [0.0, 1e-3, 5e-4, 0.0])
    ```
    """

    def __init__(self, peak, warmup_fraction=0.1, total_steps=None,
                 start_step=0):
        if not 0.0 <= float(warmup_fraction) < 1.0:
            raise ValueError(
                f"warmup_fraction must be in [0, 1); got {warmup_fraction}.")
        super().__init__(peak, total_steps, start_step)
        self.warmup_fraction = float(warmup_fraction)

    def warmup_steps(self):
        return int(self.warmup_fraction * self.total_steps)

    def factor(self, step, total):
        warmup = float(self.warmup_steps())
        rising = step / max(warmup, 1.0)
        falling = (total - step) / max(total - warmup, 1.0)
        return ops.clip(ops.where(step < warmup, rising, falling), 0.0, 1.0)

    def get_config(self):
        return {**super().get_config(),
                "warmup_fraction": self.warmup_fraction}


@keras.saving.register_keras_serializable(package="kzoo")
class SlantedTriangular(PlannedSchedule):
    """ULMFiT's slanted triangular learning rate (Howard & Ruder, 2018,
    eq. 3): a short linear rise over the first `cut_fraction` of the steps
    from `peak / ratio` to `peak`, then a long linear fall back to
    `peak / ratio`.

    Args:
        peak: the highest rate (ULMFiT: 0.01).
        cut_fraction: share of the steps spent rising (0.1).
        ratio: how much smaller the lowest rate is than the peak (32).
        total_steps, start_step: as `WarmupLinearDecay`'s (`fit` plans).

    Example:
    ```python
    optimizer = keras.optimizers.Adam(
        kzoo.training.SlantedTriangular(0.01), beta_1=0.7, beta_2=0.99)
    ```
    """

    def __init__(self, peak, cut_fraction=0.1, ratio=32.0, total_steps=None,
                 start_step=0):
        if not 0.0 < float(cut_fraction) < 1.0:
            raise ValueError(
                f"cut_fraction must be in (0, 1); got {cut_fraction}.")
        if float(ratio) < 1.0:
            raise ValueError(f"ratio must be >= 1; got {ratio}.")
        super().__init__(peak, total_steps, start_step)
        self.cut_fraction = float(cut_fraction)
        self.ratio = float(ratio)

    def factor(self, step, total):
        cut = max(float(int(total * self.cut_fraction)), 1.0)
        # p: 0 -> 1 over the rise, then 1 -> 0 at the last step.
        fall = max(cut * (1.0 / self.cut_fraction - 1.0), 1.0)  # the paper's
        p = ops.where(step < cut, step / cut, 1.0 - (step - cut) / fall)
        p = ops.clip(p, 0.0, 1.0)
        return (1.0 + p * (self.ratio - 1.0)) / self.ratio

    def get_config(self):
        return {**super().get_config(), "cut_fraction": self.cut_fraction,
                "ratio": self.ratio}
