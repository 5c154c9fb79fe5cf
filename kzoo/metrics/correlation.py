"""Pearson and Spearman correlation, the scores of STS-B and other
sentence-pair regression sets: NumPy functions, and Pearson as a Keras
metric (running sums, so it streams over batches on every backend)."""

import keras
import numpy as np
from keras import ops


def pearson(x, y):
    """Pearson's r of two equal-length sequences of numbers.

    Example:
    ```python
    from kzoo import metrics
    assert abs(metrics.pearson([1, 2, 3], [2, 4, 7]) - 0.9934) < 1e-4
    ```
    """
    x, y = _pair(x, y, "pearson")
    x, y = x - x.mean(), y - y.mean()
    denominator = np.sqrt((x * x).sum() * (y * y).sum())
    return float((x * y).sum() / denominator) if denominator > 0 else 0.0


def spearman(x, y):
    """Spearman's rho: Pearson's r of the ranks (ties get their mean
    rank, as scipy's `spearmanr`).

    Example:
    ```python
    from kzoo import metrics
    assert metrics.spearman([1, 2, 3], [2, 4, 70]) == 1.0   # same order
    ```
    """
    x, y = _pair(x, y, "spearman")
    return pearson(_ranks(x), _ranks(y))


def _ranks(values):
    order = np.argsort(values, kind="mergesort")
    ranks = np.empty(len(values), "float64")
    ranks[order] = np.arange(1, len(values) + 1)
    # Ties: every member of a tied group gets the group's mean rank.
    unique, inverse = np.unique(values, return_inverse=True)
    sums = np.bincount(inverse, weights=ranks)
    counts = np.bincount(inverse)
    return (sums / counts)[inverse]


def _pair(x, y, name):
    x = np.asarray(x, "float64").reshape(-1)
    y = np.asarray(y, "float64").reshape(-1)
    if x.shape != y.shape or x.size < 2:
        raise ValueError(f"{name}: needs two sequences of the same length "
                         f"(at least 2); got {x.size} and {y.size} values.")
    return x, y


@keras.saving.register_keras_serializable(package="kzoo")
class PearsonCorrelation(keras.metrics.Metric):
    """Pearson's r between targets and predictions over everything seen
    since the last reset (one output column; a regression head's).

    Example:
    ```python
    from kzoo import metrics
    metric = metrics.PearsonCorrelation()
    metric.update_state([1.0, 2.0, 3.0], [2.0, 4.0, 7.0])
    assert abs(float(metric.result()) - metrics.pearson([1, 2, 3],
                                                        [2, 4, 7])) < 1e-6
    # In training: model.compile(..., metrics=[metrics.PearsonCorrelation()])
    ```
    """

    def __init__(self, name="pearson", dtype="float32", **kwargs):
        super().__init__(name=name, dtype=dtype, **kwargs)
        self.sums = [self.add_variable(shape=(), initializer="zeros",
                                       name=n, dtype="float32")
                     for n in ("n", "x", "y", "xx", "yy", "xy")]

    def update_state(self, y_true, y_pred, sample_weight=None):
        x = ops.reshape(ops.cast(y_true, "float32"), (-1,))
        y = ops.reshape(ops.cast(y_pred, "float32"), (-1,))
        w = ops.ones_like(x) if sample_weight is None else \
            ops.reshape(ops.cast(sample_weight, "float32"), (-1,))
        for variable, value in zip(self.sums, (
                w, w * x, w * y, w * x * x, w * y * y, w * x * y)):
            variable.assign_add(ops.sum(value))

    def result(self):
        n, sx, sy, sxx, syy, sxy = self.sums
        covariance = sxy - sx * sy / ops.maximum(n, 1.0)
        var_x = sxx - sx * sx / ops.maximum(n, 1.0)
        var_y = syy - sy * sy / ops.maximum(n, 1.0)
        denominator = ops.sqrt(ops.maximum(var_x * var_y, 0.0))
        r = ops.where(denominator > 0,
                      covariance / ops.maximum(denominator, 1e-30), 0.0)
        return ops.cast(r, self.dtype)

    def reset_state(self):
        for variable in self.sums:
            variable.assign(0.0)
