"""A batch-size ramp (`--batch-ramp START:STEPS`): the batch grows
linearly from START examples to `--batch-size` over the first STEPS
optimizer steps, as GPT-3 (paper, appendix B: "gradually increase the
batch size linearly from a small value (32k tokens) to the full value")
and Cramming (Geiping & Goldstein 2022: a batch ramped
towards 4,096-8,192 examples) train: many small, cheap updates early,
while the gradient is large and noisy anyway.

Why the batch itself shrinks, and not the accumulation count. Megatron
and Cramming ramp by accumulating more micro-batches; Keras' optimizer
accumulates a fixed count (`gradient_accumulation_steps`, compared with
its iteration count inside the compiled step), and a varying count
would also move the step boundaries that checkpoints, the learning-rate
schedule (counted in micro-batches) and the global token count of
`kzoo.training.global_loss` (counted over a step's micro-batches) rely
on. Here every optimizer step keeps its `gradient_accumulation_steps`
micro-batches, and each micro-batch of step s holds `rows(s)` examples:
so a step's examples are `rows(s) x accumulation`, the step boundaries
and the schedule stay where they were, the global loss divides by the
step's own weighted tokens as it does for any batch, and the rows are a
function of the step alone, so a resumed run makes the batches the
uninterrupted one makes. The stream serves `rows(s)` examples of its
order for step s, so no example is skipped or padded away.

The sizes are multiples of START (`rows(s) = START x (1 + floor(s x (n
- 1) / STEPS))`, n = batch size / START, the full batch from step STEPS
on), as Megatron's ramp grows in fixed increments: a compiled step is
traced once per size (n sizes at most), and every size divides among
the processes and row groups that START divides among.
"""

import math

from kzoo.pretraining.errors import PretrainingError


def parse_ramp(value, source="arguments"):
    """`"START:STEPS"` (the flag), `[START, STEPS]` or `{"start", "steps"}`
    (a config file) -> `[start, steps]`; a clear error otherwise."""
    parts = None
    if isinstance(value, str) and value.count(":") == 1:
        parts = value.split(":")
        try:
            parts = [int(part) for part in parts]
        except ValueError:
            parts = None
    elif isinstance(value, dict) and set(value) == {"start", "steps"}:
        parts = [value["start"], value["steps"]]
    elif isinstance(value, (list, tuple)) and len(value) == 2:
        parts = list(value)
    if parts is None or not all(isinstance(p, int) and not isinstance(
            p, bool) for p in parts) or parts[0] < 1 or parts[1] < 1:
        raise PretrainingError(
            f"batch_ramp ({source}) must be START:STEPS, two whole numbers "
            f">= 1 (e.g. --batch-ramp 8:1000: from 8 examples to the batch "
            f"size over 1000 steps); got {value!r}.")
    return parts


def check_ramp(ramp, batch_size, source="arguments"):
    """Refuse a START that is not below and a divisor of the batch size."""
    start, _ = ramp
    if start >= batch_size or batch_size % start:
        raise PretrainingError(
            f"batch_ramp START ({start}) ({source}) must be below the batch "
            f"size ({batch_size}) and divide it (the ramp grows in steps of "
            f"START); pick a divisor of {batch_size}, e.g. "
            f"{_divisor_below(batch_size)}.")


def _divisor_below(number):
    return max(d for d in range(1, number) if number % d == 0) \
        if number > 1 else 1


class BatchRamp:
    """The rows of each micro-batch of a ramped run (module doc).

    Args:
        start, steps: the ramp (`parse_ramp`).
        batch_size: the full batch (`--batch-size`).
        accumulation: micro-batches per optimizer step.
    """

    def __init__(self, start, steps, batch_size, accumulation=1):
        self.start, self.steps = int(start), int(steps)
        self.batch_size = int(batch_size)
        self.accumulation = int(accumulation)
        self.sizes = self.batch_size // self.start

    def rows(self, step):
        """The examples of each micro-batch of optimizer step `step`
        (from 0)."""
        if step >= self.steps:
            return self.batch_size
        return self.start * (1 + math.floor(
            step * (self.sizes - 1) / self.steps))

    def rows_of_batch(self, index):
        """The rows of micro-batch `index` (the stream's count)."""
        return self.rows(index // self.accumulation)

    def check_divides(self, count, what):
        """Refuse a START that `count` (processes, row groups) does not
        divide: every size must split among them."""
        if self.start % count:
            raise PretrainingError(
                f"batch_ramp START ({self.start}) must divide among the "
                f"{count} {what}; pick a multiple of {count}.")
