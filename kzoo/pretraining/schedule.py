"""BERT's pretraining schedule over a run's optimizer steps: linear warmup
over `warmup_steps`, then linear decay to 0 at `max_steps`.

It is `kzoo.training.WarmupLinearDecay` with its plan fixed: `Task.fit`
re-plans kzoo's schedules to span each `fit` call from the optimizer's
current step, which a resumed run must not do (the rate at step s is the
same whether the run was resumed or not). The rate is a function of the
optimizer's iteration count alone, so it is restored with the optimizer's
variables. Keras hands a schedule the count of batches (with gradient
accumulation, `accumulation` per update); the schedule divides.
"""

import keras
from keras import ops

from kzoo.training import WarmupLinearDecay


@keras.saving.register_keras_serializable(package="kzoo")
class PretrainingSchedule(WarmupLinearDecay):

    def __init__(self, peak, warmup_steps, total_steps, accumulation=1):
        super().__init__(peak, warmup_fraction=0.0, total_steps=total_steps)
        self.fixed_warmup_steps = int(warmup_steps)
        self.accumulation = int(accumulation)

    def warmup_steps(self):
        return self.fixed_warmup_steps

    def plan(self, total_steps, start_step):
        # The run's plan (max_steps from step 0) stays whatever `fit` runs.
        return False

    def __call__(self, step):
        if self.accumulation > 1:
            step = ops.floor_divide(step, self.accumulation)
        return super().__call__(step)

    def rate_at(self, step):
        """The rate of optimizer step `step` (from 0), in Python."""
        warmup, total = float(self.fixed_warmup_steps), float(
            self.total_steps)
        if step < warmup:
            factor = step / max(warmup, 1.0)
        else:
            factor = (total - step) / max(total - warmup, 1.0)
        return self.peak * min(max(factor, 0.0), 1.0)

    def get_config(self):
        return {"peak": self.peak, "warmup_steps": self.fixed_warmup_steps,
                "total_steps": self.total_steps,
                "accumulation": self.accumulation}
