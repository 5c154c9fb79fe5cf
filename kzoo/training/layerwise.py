"""Discriminative (layer-wise) learning rates and gradual unfreezing.

ULMFiT (Howard & Ruder, 2018) fine-tunes each layer group at its own rate,
the rate falling by a factor (2.6) from one group to the one below, and
unfreezes the groups one at a time from the top; later BERT recipes call
the same idea layer-wise learning-rate decay (a factor ~0.9 per layer).

Keras optimizers have one learning rate, so kzoo's optimizers here add a
scale per layer group: `LayerwiseAdamW` (and `LayerwiseAdam`,
`LayerwiseSGD`) update a variable of group g with `learning_rate * scale_g`
(decoupled weight decay scaled the same way, as `torch.optim` param groups
do it). The scales are optimizer variables, not constants, so a callback
may change them between epochs without a new compile on any backend:
`GradualUnfreezing` sets the scale of a frozen group to 0, and a frozen
group's weights do not move (its gradients are still computed; for a
backbone frozen for good, `backbone.trainable = False` is cheaper).

Groups are named by layer: `layer_groups(task)` lists the layer names of
each group from the bottom (embeddings) to the top (the task's head), the
backbone's groups coming from `Backbone.layer_groups()`.

```python
groups = kzoo.training.layer_groups(classifier)
classifier.compile(optimizer=kzoo.training.LayerwiseAdamW(
    2e-5, layer_groups=groups, decay=0.9, weight_decay=0.01))
classifier.fit(texts, labels, epochs=3,
               callbacks=[kzoo.training.GradualUnfreezing()])
```
"""

import keras

from kzoo.training.adam import Adam, AdamW
from kzoo.utils import private_apis

_SCALE_PREFIX = "layer_group_scale_"


def layer_groups(model):
    """The layer groups of a task or a backbone, bottom to top: each a list
    of layer names. A task's head layers (everything outside its backbone)
    form the top group.

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    groups = training.layer_groups(classifier)   # bottom to top
    assert len(groups) == 2 + 2   # embeddings, 2 blocks (+ pooler), the head
    ```
    """
    backbone = getattr(model, "backbone", None)
    if backbone is None:
        return model.layer_groups()
    groups = backbone.layer_groups()
    head = [layer.name for layer in model.layers
            if layer is not backbone and layer.weights]
    return groups + [head] if head else groups


def decayed_scales(num_groups, decay):
    """`decay ** k` for the group k places below the top; the top is 1.

    Example:
    ```python
    from kzoo import training
    assert training.decayed_scales(3, 0.5) == [0.25, 0.5, 1.0]
    ```
    """
    return [float(decay) ** (num_groups - 1 - g) for g in range(num_groups)]


class LayerwiseMixin:
    """Per-layer-group learning-rate scales for a Keras optimizer class.

    Args (besides the optimizer's own):
        layer_groups: lists of layer names, bottom to top (see
            `layer_groups`). A variable belongs to the group of the layer
            its path starts with; a variable of no listed layer belongs to
            the top group.
        decay: the scale falls by this factor per group from the top
            (ULMFiT: 1 / 2.6; layer-wise decay for BERT: ~0.9). Ignored
            when `scales` is given.
        scales: one scale per group, bottom to top.

    Example:
    ```python
    import keras
    from kzoo import training

    class LayerwiseRMSprop(training.LayerwiseMixin, keras.optimizers.RMSprop):
        pass   # RMSprop with a learning-rate scale per layer group

    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    optimizer = LayerwiseRMSprop(
        1e-3, layer_groups=training.layer_groups(classifier), decay=0.5)
    assert optimizer.scales == [0.125, 0.25, 0.5, 1.0]
    ```
    """

    def __init__(self, *args, layer_groups, decay=1.0, scales=None,
                 **kwargs):
        super().__init__(*args, **kwargs)
        groups = [list(group) for group in layer_groups]
        if not groups or not all(isinstance(n, str) for g in groups
                                 for n in g):
            raise ValueError(
                f"{type(self).__name__}: layer_groups must be a non-empty "
                "list of lists of layer names (see kzoo.training."
                f"layer_groups(task)); got {layer_groups!r}.")
        if scales is None:
            if not 0.0 < float(decay) <= 1.0:
                raise ValueError(f"{type(self).__name__}: decay must be in "
                                 f"(0, 1]; got {decay!r}.")
            scales = decayed_scales(len(groups), decay)
        scales = [float(s) for s in scales]
        if len(scales) != len(groups) or any(s < 0 for s in scales):
            raise ValueError(
                f"{type(self).__name__}: scales must be {len(groups)} "
                f"numbers >= 0, one per layer group; got {scales!r}.")
        self.layer_groups = groups
        self.decay = float(decay)
        self.scales = scales
        self._group_of_layer = {name: g for g, group in enumerate(groups)
                                for name in group}

    # --- Variables ---------------------------------------------------------
    def build(self, variables):
        if self.built:
            return
        # The per-group rate and decay run through Keras' private update
        # hooks (`_backend_update_step`, `_apply_weight_decay`, checked on
        # Keras 3.15.1; kzoo/utils/private_apis.py). No public API scales
        # one optimizer's rate per variable, so without them: a clear
        # error, not an update at one rate for every group.
        private_apis.require("keras:optimizer-hooks", type(self).__name__)
        # Before the base build: the scales are optimizer variables (saved,
        # and part of the optimizer state a compiled JAX step carries).
        self.group_scales = [
            self.add_variable((), initializer=keras.initializers.Constant(s),
                              name=f"{_SCALE_PREFIX}{g}")
            for g, s in enumerate(self.scales)]
        super().build(variables)
        top = len(self.layer_groups) - 1
        self._variable_groups = [
            self._group_of_layer.get(v.path.split("/")[0], top)
            for v in variables]

    def group_of(self, variable):
        """The layer group index of a trainable variable."""
        return self._variable_groups[self._get_variable_index(variable)]

    def set_group_scale(self, group, scale):
        self.group_scales[group].assign(float(scale))

    def _by_group(self, variables, *aligned):
        """Split `variables` (and lists aligned with them) by group."""
        split = {}
        for i, variable in enumerate(variables):
            split.setdefault(self.group_of(variable), []).append(i)
        for group, indices in sorted(split.items()):
            yield (self.group_scales[group],
                   [variables[i] for i in indices],
                   *[[values[i] for i in indices] for values in aligned])

    # --- The update --------------------------------------------------------
    def _backend_update_step(self, grads, trainable_variables, learning_rate):
        # Each backend's own collective step (tf.distribute's on TF, the
        # fused one on torch), once per group at the group's rate.
        for scale, variables, group_grads in self._by_group(
                trainable_variables, grads):
            super()._backend_update_step(group_grads, variables,
                                         learning_rate * scale)

    def _apply_weight_decay(self, variables):
        # Keras' decay (distribution-aware on TF, fused on torch) reads
        # `self.weight_decay`; run it per group with the scale folded in,
        # so decay is `lr * scale * wd` as in a torch param group, and a
        # frozen group (scale 0) does not decay either.
        if self.weight_decay is None:
            return
        weight_decay = self.weight_decay
        try:
            for scale, group in self._by_group(variables):
                self.weight_decay = weight_decay * scale
                super()._apply_weight_decay(group)
        finally:
            self.weight_decay = weight_decay

    def get_config(self):
        return {**super().get_config(), "layer_groups": self.layer_groups,
                "decay": self.decay, "scales": self.scales}


@keras.saving.register_keras_serializable(package="kzoo")
class LayerwiseAdamW(LayerwiseMixin, AdamW):
    """AdamW with a learning-rate scale per layer group (see
    `LayerwiseMixin`). Biases and normalization parameters are spared
    weight decay, as in kzoo's default optimizer
    (`decay_norms_and_biases=False`).

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False,
        sequence_length=16)
    optimizer = training.LayerwiseAdamW(
        2e-5, layer_groups=training.layer_groups(classifier), decay=0.9)
    classifier.compile(optimizer=optimizer,
                       loss=keras.losses.SparseCategoricalCrossentropy(
                           from_logits=True))
    classifier.fit(["great film", "dull film"], [1, 0], epochs=1)
    ```
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("decay_norms_and_biases", False)
        super().__init__(*args, **kwargs)


@keras.saving.register_keras_serializable(package="kzoo")
class LayerwiseAdam(LayerwiseMixin, Adam):
    """Adam with a learning-rate scale per layer group (ULMFiT's optimizer;
    see `LayerwiseMixin`).

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    # ULMFiT's: each group 2.6 times slower than the one above.
    optimizer = training.LayerwiseAdam(
        1e-3, layer_groups=training.layer_groups(classifier), decay=1 / 2.6)
    assert optimizer.scales[-1] == 1.0
    ```
    """


@keras.saving.register_keras_serializable(package="kzoo")
class LayerwiseSGD(LayerwiseMixin, keras.optimizers.SGD):
    """SGD with a learning-rate scale per layer group (see
    `LayerwiseMixin`).

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False)
    groups = training.layer_groups(classifier)
    # Explicit scales: the embeddings frozen, the rest at full rate.
    optimizer = training.LayerwiseSGD(
        0.1, layer_groups=groups, scales=[0.0] + [1.0] * (len(groups) - 1))
    ```
    """


@keras.saving.register_keras_serializable(package="kzoo")
class GradualUnfreezing(keras.callbacks.Callback):
    """ULMFiT's gradual unfreezing: train only the top layer group in the
    first `epochs_per_group` epochs, then the top two, and so on, until
    every group trains. Needs a `Layerwise*` optimizer (frozen groups get
    scale 0; an unfrozen group gets its scale back).

    Args:
        epochs_per_group: epochs between two unfreezings (1 in ULMFiT).

    Example:
    ```python
    from kzoo import training
    classifier = kzoo.BertTextClassifier.from_preset(
        "bert_tiny_en_uncased", num_classes=2, load_weights=False,
        sequence_length=16)
    classifier.compile(
        optimizer=training.LayerwiseAdam(
            1e-3, layer_groups=training.layer_groups(classifier)),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    # Epoch 1 trains the head only, epoch 2 the top two groups, ...
    classifier.fit(["great film", "dull film"], [1, 0], epochs=2,
                   callbacks=[training.GradualUnfreezing(epochs_per_group=1)])
    ```
    """

    def __init__(self, epochs_per_group=1):
        super().__init__()
        if int(epochs_per_group) != epochs_per_group or epochs_per_group < 1:
            raise ValueError("GradualUnfreezing: epochs_per_group must be a "
                             f"whole number >= 1; got {epochs_per_group!r}.")
        self.epochs_per_group = int(epochs_per_group)

    def trainable_groups(self, epoch, num_groups):
        """How many groups (from the top) train in `epoch`."""
        return min(num_groups, 1 + epoch // self.epochs_per_group)

    def on_epoch_begin(self, epoch, logs=None):
        optimizer = self.model.optimizer
        if not isinstance(optimizer, LayerwiseMixin):
            raise TypeError(
                "GradualUnfreezing needs a layer-wise optimizer: compile "
                "with kzoo.training.LayerwiseAdamW (or LayerwiseAdam / "
                f"LayerwiseSGD); got {type(optimizer).__name__}.")
        if not optimizer.built:
            optimizer.build(self.model.trainable_variables)
        num_groups = len(optimizer.layer_groups)
        first_trained = num_groups - self.trainable_groups(epoch, num_groups)
        for group, scale in enumerate(optimizer.scales):
            optimizer.set_group_scale(group,
                                      scale if group >= first_trained else 0)

    def get_config(self):
        return {"epochs_per_group": self.epochs_per_group}
