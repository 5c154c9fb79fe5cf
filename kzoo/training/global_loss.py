"""One loss however a batch is split: token losses divided by the count of
weighted tokens of the whole optimizer step, over every replica and every
micro-batch.

A token loss (`kzoo.training.losses.token_loss`) averages over the real
tokens of the batch it is given. Split one step's batch over P replicas
(torch DDP, tf.distribute) and A micro-batches (gradient accumulation)
and each piece averages over its own tokens; the engines then average the
pieces, so the step optimises a mean of P x A means. When the pieces hold
different numbers of real tokens (masks are drawn per row) that is not the
mean over the step's tokens that one process on the whole batch
computes: 9e-4 apart at step 1 in the pretraining issue's measurement.

Here each piece's token loss is its share of the step's mean instead:

    sum(loss x weight over the piece) / N x A x E

where N is the step's count of weighted tokens over every replica and
micro-batch, A the number of micro-batches (Keras' accumulation averages
their gradients) and E the number of replicas whose gradients the engine
averages (torch DDP; tf.distribute sums and JAX computes on the global
batch: E = 1). The pieces then add up to the 1-process loss and gradient.

How N gets into the step. The feed counts each sample-weight array's
weights over the step's A micro-batches of this process (`count_steps`)
and hands the count along with every micro-batch; inside the step the
counts of all replicas are summed (`replica_sum`, the engine's
collective; on JAX the counts are one global array and their sum is
global). Losses that are not token losses (a next-sentence loss over
examples) and tasks that compute their own loss (`compute_loss`
overridden: ELECTRA's RTD, ELMo's biLM) keep their per-piece means.
"""

import keras
import numpy as np
from keras import ops

# The sample-weight structure the feed hands a counted step's batches in.
WEIGHTS, COUNTS = "kzoo_weights", "kzoo_step_counts"

# id(sample-weight array) -> (N, A x E) while a counted step computes its
# loss: the token losses look their weights up here (`GlobalTokenMean`).
_SHARES = {}


def count_steps(batches, accumulation):
    """The (x, y, sample_weight) batches of `batches` (a generator of one
    process' micro-batches, an optimizer step being `accumulation` of them
    in a row), each with its sample weights replaced by
    `{WEIGHTS: sample_weight, COUNTS: counts}`: `counts` holds, for each
    sample-weight array in `keras.tree.flatten` order, this process'
    weight total over the step's micro-batches, in row 0 of a (rows,)
    float32 array (zeros elsewhere: summed over a global batch's rows it
    gives every process' total). Batches without sample weights pass
    through unchanged; an incomplete last step is dropped."""
    while True:
        step = []
        for _ in range(accumulation):
            try:
                step.append(next(batches))
            except StopIteration:
                # A run's batches end only when a later generator took
                # over (run.py, `_batches`): a step cut short is not fed.
                return
        weights = [keras.tree.flatten(batch[2]) if len(batch) > 2 and
                   batch[2] is not None else None for batch in step]
        if weights[0] is None:
            yield from step
            continue
        totals = np.sum([[np.sum(w, dtype=np.float64) for w in leaves]
                         for leaves in weights], axis=0)
        for batch in step:
            rows = len(keras.tree.flatten(batch[0])[0])
            counts = []
            for total in totals:
                column = np.zeros(rows, np.float32)
                column[0] = total
                counts.append(column)
            yield batch[0], batch[1], {WEIGHTS: batch[2],
                                       COUNTS: tuple(counts)}


def is_counted(sample_weight):
    return isinstance(sample_weight, dict) and COUNTS in sample_weight


def uncounted(sample_weight):
    """The batch's own sample weights, counted or not."""
    return sample_weight[WEIGHTS] if is_counted(sample_weight) \
        else sample_weight


def install(task, accumulation=1, replica_sum=None, averaged_replicas=1):
    """Make `task` compute each token loss of a counted batch as its share
    of the step's mean (module doc).

    Args:
        task: a compiled Keras model.
        accumulation: micro-batches per optimizer step (A).
        replica_sum: `tensor -> tensor` summed over the replicas of the
            step (None: one replica, or a global batch as on JAX).
        averaged_replicas: how many replicas' gradients the engine
            averages (E: torch DDP's process count; else 1).

    Only the compiled loss is counted: a task whose class overrides
    `compute_loss` gets its own weights back and keeps its per-piece means.
    """
    own_loss = type(task).compute_loss is keras.Model.compute_loss
    compute_loss, compute_metrics = task.compute_loss, task.compute_metrics
    multiplier = float(accumulation * averaged_replicas)

    def counted_compute_loss(x=None, y=None, y_pred=None,
                             sample_weight=None, training=True):
        weights = uncounted(sample_weight)
        if not (training and own_loss and is_counted(sample_weight)):
            return compute_loss(x, y, y_pred, weights, training=training)
        leaves = keras.tree.flatten(weights)
        added = []
        for leaf, counts in zip(leaves, sample_weight[COUNTS]):
            total = ops.sum(ops.cast(counts, "float32"))
            if replica_sum is not None:
                total = replica_sum(total)
            _SHARES[id(leaf)] = (total, multiplier)
            added.append(id(leaf))
        try:
            return compute_loss(x, y, y_pred, weights, training=training)
        finally:
            for key in added:
                _SHARES.pop(key, None)

    def counted_compute_metrics(x, y, y_pred, sample_weight=None):
        return compute_metrics(x, y, y_pred,
                               sample_weight=uncounted(sample_weight))

    # Instance attributes, found before the class' methods (and past
    # Keras' attribute tracking).
    object.__setattr__(task, "compute_loss", counted_compute_loss)
    object.__setattr__(task, "compute_metrics", counted_compute_metrics)
    return task


class GlobalTokenMean:
    """Mixed in before a Keras loss whose reduction is the mean over the
    weighted tokens: given the weights of a counted step, the loss is its
    share of the step's mean (module doc); otherwise Keras' own."""

    def __call__(self, y_true, y_pred, sample_weight=None):
        share = None if sample_weight is None else \
            _SHARES.get(id(sample_weight))
        if share is None:
            return super().__call__(y_true, y_pred, sample_weight)
        total, multiplier = share
        summed = self._summing()(y_true, y_pred, sample_weight)
        return ops.divide_no_nan(summed, ops.cast(total, summed.dtype)) \
            * ops.cast(multiplier, summed.dtype)

    def _summing(self):
        """This loss with a plain sum as its reduction (the same loss
        class, the one this is mixed into, and options)."""
        if getattr(self, "_summing_loss", None) is None:
            mro = type(self).__mro__
            loss_class = mro[mro.index(GlobalTokenMean) + 1]
            config = {**loss_class.get_config(self), "reduction": "sum"}
            self._summing_loss = loss_class.from_config(config)
        return self._summing_loss
