"""Weight decay spares every family's normalization parameters and
biases, found by role (kzoo.training.weight_decay), and decays the rest.

A name list (`bias`, `gamma`, `beta`) decayed T5's RMSNorm `scale`; the
tests check the rule on every registered backbone, variable by variable,
and run one decay-only step of the default optimizer (zero gradients, so
Adam's update is 0 and only the decay moves a weight) to see it applied.
"""

import keras
import numpy as np
import pytest

import kzoo
from kzoo import training
from kzoo.core.backbone import Backbone
from kzoo.training.weight_decay import spared_from_decay
from text_testing import params, tiny_backbone

DECAY = 0.5


def _sublayers(layer):
    # Keras lists a layer's sublayers only through this private method (a
    # test may read it; kzoo's code does not).
    return layer._flatten_layers(include_self=False, recursive=True)


def _spared_paths(backbone):
    """The variables the original recipes spare: every variable of a
    normalization layer (LayerNorm, RMSNorm, ...) and every bias."""
    norms = {v.path for layer in _sublayers(backbone)
             if "norm" in type(layer).__name__.lower()
             for v in layer.weights}
    biases = {v.path for v in backbone.trainable_variables
              if "bias" in v.path.rsplit("/", 1)[-1]}
    return norms, biases


def _decay_step(optimizer, variables):
    # Nonzero everywhere, so that a decayed bias or offset (0 at init)
    # shows that it moved.
    rng = np.random.default_rng(0)
    for v in variables:
        v.assign(rng.uniform(0.5, 1.5, v.shape).astype(v.dtype))
    before = [np.array(keras.ops.convert_to_numpy(v.value)) for v in variables]
    optimizer.apply([keras.ops.zeros_like(v.value) for v in variables],
                    variables)
    after = [keras.ops.convert_to_numpy(v.value) for v in variables]
    return {v.path: not np.array_equal(a, b)
            for v, a, b in zip(variables, after, before)}


@pytest.mark.once   # which variables: a Python rule, the same on every backend
@pytest.mark.parametrize("backbone_cls", params(Backbone))
def test_the_rule_spares_every_familys_norms_and_biases(backbone_cls):
    backbone = tiny_backbone(backbone_cls)
    norms, biases = _spared_paths(backbone)
    assert norms or biases
    for v in backbone.trainable_variables:
        assert spared_from_decay(v) == (v.path in norms | biases), v.path


def test_default_optimizer_spares_t5s_rmsnorm_scale():
    # The case a name list missed: RMSNorm's weight is called `scale`.
    backbone = tiny_backbone(kzoo.T5Backbone)
    variables = backbone.trainable_variables
    # An unplanned schedule runs at its peak, so one step decays by
    # learning_rate * weight_decay.
    moved = _decay_step(training.default_optimizer(learning_rate=1.0,
                                                   weight_decay=DECAY),
                        variables)
    norms, _ = _spared_paths(backbone)
    assert norms and not any(moved[path] for path in norms)
    assert all(moved[v.path] for v in variables if len(v.shape) >= 2)


def test_the_rule_adds_to_the_users_own_exclusions():
    dense = keras.layers.Dense(3, name="head")
    dense.build((None, 2))
    norm = keras.layers.LayerNormalization()
    norm.build((None, 3))
    variables = dense.trainable_variables + norm.trainable_variables
    optimizer = training.AdamW(1.0, weight_decay=DECAY,
                               decay_norms_and_biases=False)
    optimizer.exclude_from_weight_decay(var_names=["kernel"])
    moved = _decay_step(optimizer, variables)
    assert not any(moved.values())   # the kernel by name, the rest by rule


def test_keras_behaviour_unless_asked():
    norm = keras.layers.LayerNormalization()
    norm.build((None, 3))
    moved = _decay_step(training.AdamW(1.0, weight_decay=DECAY),
                        norm.trainable_variables)
    assert all(moved.values())


def test_the_rule_survives_saving():
    optimizer = training.LayerwiseAdamW(1e-3, layer_groups=[["a"]],
                                        weight_decay=0.01)
    config = keras.optimizers.serialize(optimizer)
    restored = keras.optimizers.deserialize(config)
    assert restored.decay_norms_and_biases is False
