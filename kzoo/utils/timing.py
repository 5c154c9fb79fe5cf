"""Timing a step: warm-up calls first, then the median of timed calls."""

import time


def median_seconds(step, steps=5, warmup=2):
    """Seconds per call of `step()`: `warmup` untimed calls (compilation,
    first-call allocation), then the median of `steps` timed ones (the
    median shrugs off a call that another process on the machine slowed
    down; the mean would not)."""
    for _ in range(warmup):
        step()
    seconds = []
    for _ in range(steps):
        start = time.perf_counter()
        step()
        seconds.append(time.perf_counter() - start)
    seconds.sort()
    middle = len(seconds) // 2
    if len(seconds) % 2:
        return seconds[middle]
    return (seconds[middle - 1] + seconds[middle]) / 2
