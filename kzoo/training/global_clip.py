"""Clip the global norm of the step's whole gradient, on every engine.

Two ways Keras' TensorFlow optimizer (3.15.1) clips something else:

- Under tf.distribute it clips each replica's gradients
  (optimizers/base_optimizer.py, `_backend_apply_gradients`) and sums
  them across replicas only afterwards, in the update
  (backend/tensorflow/optimizer.py, `_backend_update_step`). With a
  global-norm clip (BERT's recipe clips at 1.0) 2 processes then clip
  other vectors than one: 5.9e-4 apart after 4 steps of the tiny
  distributed test run.
- An embedding's gradient is a `tf.IndexedSlices` holding one slice per
  looked-up id, repeated ids repeated; `global_norm` squares the slices
  one by one (`ops.square` keeps them sparse), so a token seen twice adds
  a^2 + b^2 where the gradient's row holds (a + b)^2. Once micro-batches
  are accumulated the gradient is dense and the norm right: the 1-batch
  step and the accumulated one clipped differently (1.8e-5 apart in the
  weights after 3 steps of tests/pretraining/test_global_loss.py).

torch DDP averages in the backward pass, JAX computes the global batch,
and both hand dense gradients, so they clip the step's gradient already.
`GlobalClipMixin` sums the gradients across replicas before Keras
accumulates and clips them (and skips Keras' own sum in the update), and
makes them dense before a global-norm clip.
"""

import keras


def _replica_context():
    """The tf.distribute replica context whose gradients must be summed,
    or None (not TensorFlow, or one replica)."""
    if keras.backend.backend() != "tensorflow":
        return None
    import tensorflow as tf
    context = tf.distribute.get_replica_context()
    if context is None or context.num_replicas_in_sync < 2:
        return None
    return context


class GlobalClipMixin:
    """Mixed in before a Keras optimizer: the global norm clipped is that
    of the step's gradient, summed over tf.distribute replicas (before
    gradient accumulation too, which then holds the step's sum) and with
    repeated embedding rows added up (module doc)."""

    def _backend_apply_gradients(self, grads, trainable_variables):
        context = _replica_context()
        if context is not None:
            import tensorflow as tf
            present = [i for i, g in enumerate(grads) if g is not None]
            summed = context.all_reduce(tf.distribute.ReduceOp.SUM,
                                        [grads[i] for i in present])
            grads = list(grads)
            for i, value in zip(present, summed):
                grads[i] = value
        return super()._backend_apply_gradients(grads, trainable_variables)

    def _all_reduce_sum_gradients(self, grads_and_vars):
        if _replica_context() is not None:
            return list(grads_and_vars)  # summed in _backend_apply_gradients
        return super()._all_reduce_sum_gradients(grads_and_vars)

    def _clip_gradients(self, grads):
        if self.global_clipnorm and keras.backend.backend() == "tensorflow":
            import tensorflow as tf
            grads = [tf.convert_to_tensor(g)
                     if isinstance(g, tf.IndexedSlices) else g
                     for g in grads]
        return super()._clip_gradients(grads)
