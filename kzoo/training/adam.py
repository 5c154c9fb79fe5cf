"""Adam and AdamW with Keras' numbers, run as one fused kernel per
parameter on torch and TensorFlow.

`kzoo.training.AdamW` and `kzoo.training.Adam` are Keras' `AdamW` and
`Adam`: the same arguments, variables, saved state and results on every
backend (to float rounding). They differ in how the update runs.
Keras' torch Adam makes ~10 `torch._foreach_*` passes over the parameters
per step, five of which allocate a temporary the size of the model, plus
one more for the weight decay. torch ships a fused AdamW kernel (the one
`torch.optim.AdamW(fused=True)` and transformers' Trainer use, reached
through torch's public functional `torch.optim.adamw.adamw`) that reads
and writes each parameter once: a 4-layer BERT-base-wide training step
(8 x 128, CPU) took 1,018-1,051 ms with it against 1,127-1,444 ms with
Keras' update.

On TensorFlow, Keras' update is ~10 ops per variable, each its own pass
(grappler does not fuse them on CPU); `tf.raw_ops.ResourceApplyAdam` is
TensorFlow's one-pass kernel of Keras' very formula (Keras 2's optimizers
used it): the same step, 877-888 ms against 954-989 ms. It runs where
Keras' update would, per variable inside tf.distribute's update (each
replica's copy), so a strategy gives the single-device numbers. JAX
keeps Keras' update: XLA fuses it already.

torch's kernel differs from Keras' formula in one place: it divides by
`sqrt(v / (1 - beta_2**t)) + epsilon`, Keras by `sqrt(v) + epsilon`
after folding the bias correction into the step size; passing it
`epsilon / sqrt(1 - beta_2**t)` makes the two the same. Weight decay is
decoupled in both (Keras applies it for Adam too) and comes before the
update in both.
"""

import functools
import math

import keras

from kzoo.training.global_clip import GlobalClipMixin
from kzoo.training.weight_decay import DecayRuleMixin
from kzoo.utils import private_apis

# Keras' optimizer internals the fused update overrides and reads (see the
# table in kzoo/utils/private_apis.py; checked on Keras 3.15.1). Without
# them Keras' own update runs: the same numbers, ~10 passes per variable.
_KERAS_HOOKS = "keras:optimizer-hooks"


def _fused_kernel():
    """torch's fused AdamW step when the backend is torch (its public
    functional API, `torch.optim.adamw.adamw` with `fused=True`: one
    `torch._fused_adamw_` call per device and dtype), else None."""
    if keras.backend.backend() != "torch":
        return None
    # Public: in torch.optim.adamw's __all__ (torch's rule for public
    # names), though the package hides the module's name.
    from torch.optim.adamw import adamw
    return functools.partial(adamw, fused=True)


def _fused_supported(values):
    """Whether torch's fused kernel takes these tensors (a floating dtype
    on a device that has the kernel: CPU from torch 2.4, CUDA, ...).
    Asked through the public constructor, which refuses what the kernel
    does not take, on a one-element tensor per device and dtype."""
    import torch
    kinds = {(value.device, value.dtype) for value in values}
    for device, dtype in kinds:
        if not dtype.is_floating_point:
            return False
        try:
            torch.optim.AdamW([torch.zeros(1, device=device, dtype=dtype)],
                              fused=True)
        except RuntimeError:
            return False
    return True


class FusedAdamMixin:
    """Runs a Keras Adam/AdamW update as one fused kernel per parameter:
    torch's fused AdamW on torch (`_backend_update_step`, all variables
    at once), `ResourceApplyAdam` on TensorFlow (`update_step`, per
    variable, where Keras' tf.distribute routing calls it).

    Mixed in before `keras.optimizers.Adam` or `keras.optimizers.AdamW`;
    on JAX, for variables the kernels do not take (on torch a device
    without the kernel or a non-floating dtype; on TensorFlow a variable
    without a resource handle), or with a Keras whose optimizer internals
    differ from those checked (kzoo/utils/private_apis.py), Keras' update
    runs.
    """

    def build(self, variables):
        if self.built:
            return
        super().build(variables)
        slots = private_apis.ADAM_SLOTS[:3 if self.amsgrad else 2]
        self._fused_ready = private_apis.has(_KERAS_HOOKS) and all(
            hasattr(self, name) for name in slots)
        kernel = _fused_kernel() if self._fused_ready else None
        if kernel is not None and not _fused_supported(
                [v.value for v in variables]):
            kernel = None
        self._fused_adamw = kernel

    def _apply_weight_decay(self, variables):
        # The fused kernel decays the weights itself (before the update,
        # as Keras does).
        if getattr(self, "_fused_adamw", None) is None:
            super()._apply_weight_decay(variables)

    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        if getattr(self, "_fused_adamw", None) is None:
            return super()._backend_update_step(grads, trainable_variables,
                                                learning_rate)
        import torch
        with torch.no_grad():
            self._fused_update(grads, trainable_variables, learning_rate)

    def update_step(self, gradient, variable, learning_rate):
        # TensorFlow's path (`_backend_update_step` calls this per variable).
        if (keras.backend.backend() != "tensorflow"
                or not getattr(self, "_fused_ready", False)
                or not hasattr(variable, "handle")):
            return super().update_step(gradient, variable, learning_rate)
        import tensorflow as tf
        index = self._get_variable_index(variable)
        dtype = variable.dtype

        def scalar(value):
            return tf.cast(value, dtype)

        step = scalar(self.iterations + 1)
        arguments = dict(
            var=variable.handle, m=self._momentums[index].value.handle,
            v=self._velocities[index].value.handle,
            beta1_power=tf.pow(scalar(self.beta_1), step),
            beta2_power=tf.pow(scalar(self.beta_2), step),
            lr=scalar(learning_rate), beta1=scalar(self.beta_1),
            beta2=scalar(self.beta_2), epsilon=scalar(self.epsilon),
            grad=tf.cast(tf.convert_to_tensor(gradient), dtype),
            use_locking=False)
        if self.amsgrad:
            tf.raw_ops.ResourceApplyAdamWithAmsgrad(
                vhat=self._velocity_hats[index].value.handle, **arguments)
        else:
            tf.raw_ops.ResourceApplyAdam(**arguments)

    def _fused_update(self, grads, variables, learning_rate):
        import torch
        # The kernel takes scalars as Python numbers: one host read of the
        # step and the rate per step (on a GPU, a wait for the backward
        # pass that the update needs anyway).
        # With gradient accumulation Keras' `iterations` is a tensor (its
        # batch count floor-divided by the accumulation steps), else the
        # variable.
        iterations = self.iterations
        step = float(getattr(iterations, "value", iterations)) + 1.0
        learning_rate = float(learning_rate)
        weight_decay = float(self.weight_decay or 0.0)
        epsilon = self.epsilon / math.sqrt(1.0 - self.beta_2 ** step)
        groups = {}
        for grad, variable in zip(grads, variables):
            index = self._get_variable_index(variable)
            value = variable.value
            decay = (weight_decay if self._use_weight_decay(variable)
                     else 0.0)
            group = groups.setdefault((decay, value.device, value.dtype),
                                      ([], [], [], [], []))
            group[0].append(value)
            group[1].append(grad.to(value.dtype))
            group[2].append(self._momentums[index].value)
            group[3].append(self._velocities[index].value)
            if self.amsgrad:
                group[4].append(self._velocity_hats[index].value)
        for (decay, device, _), (values, grads, m, v, v_max) in (
                groups.items()):
            # torch keeps a step tensor per parameter and adds 1 to each
            # before the kernel reads it; ours is shared, so each step
            # starts the group's views of one tensor at the previous step.
            steps = list(torch.full((len(values),), step - 1.0,
                                    dtype=torch.float32,
                                    device=device).unbind(0))
            self._fused_adamw(
                values, grads, m, v, v_max, steps, lr=learning_rate,
                beta1=float(self.beta_1), beta2=float(self.beta_2),
                weight_decay=decay, eps=epsilon, amsgrad=bool(self.amsgrad),
                maximize=False)


@keras.saving.register_keras_serializable(package="kzoo")
class AdamW(GlobalClipMixin, DecayRuleMixin, FusedAdamMixin,
            keras.optimizers.AdamW):
    """Keras' `AdamW` (same arguments, same numbers), run as one fused
    kernel per parameter on torch and TensorFlow. kzoo's tasks train with
    it by default.

    One argument more: `decay_norms_and_biases=False` spares every bias
    and normalization parameter (any variable of rank < 2, whatever its
    name) from weight decay, as BERT's recipe does; see
    `kzoo.training.weight_decay`. The default, True, is Keras' behaviour.

    Example:
    ```python
    from kzoo import training
    optimizer = training.AdamW(learning_rate=3e-5, weight_decay=0.01,
                               decay_norms_and_biases=False)
    ```
    """


@keras.saving.register_keras_serializable(package="kzoo")
class Adam(GlobalClipMixin, DecayRuleMixin, FusedAdamMixin,
           keras.optimizers.Adam):
    """Keras' `Adam` (same arguments, same numbers; a `weight_decay`, if
    given, decoupled as Keras applies it), run as one fused kernel per
    parameter on torch and TensorFlow.

    Example:
    ```python
    from kzoo import training
    optimizer = training.Adam(learning_rate=1e-3)
    ```
    """
