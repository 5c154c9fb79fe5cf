"""Layer-wise learning rates, gradual unfreezing and the slanted triangular
schedule: the rate each layer group receives is read back from the weight
updates of real `fit` steps, on the current backend."""

import keras
import numpy as np
import pytest

import kzoo
from helpers import random_bert_inputs, to_numpy
from kzoo.training import (
    GradualUnfreezing, LayerwiseAdamW, LayerwiseSGD, SlantedTriangular,
    layer_groups)

VOCAB = 64


def _classifier():
    backbone = kzoo.BertBackbone(
        vocabulary_size=VOCAB, num_layers=2, num_heads=2, hidden_dim=8,
        intermediate_dim=16, max_sequence_length=16, dropout=0.0,
        attention_dropout=0.0)
    return kzoo.BertTextClassifier(backbone, num_classes=2, dropout=0.0)


def _data(n=8):
    x = random_bert_inputs(batch=n, seq=6, vocabulary_size=VOCAB)
    return x, np.arange(n) % 2


def _weights(task):
    return {v.path: to_numpy(v.value).copy() for v in task.trainable_weights}


def _group_of_path(groups, path):
    layer = path.split("/")[0]
    return next((g for g, names in enumerate(groups) if layer in names),
                len(groups) - 1)


def test_layer_groups_run_from_embeddings_to_the_head():
    groups = layer_groups(_classifier())
    assert groups == [
        ["token_embedding", "position_embedding", "segment_embedding",
         "embeddings_layer_norm"],
        ["transformer_layer_0"],
        ["transformer_layer_1", "pooler"],
        ["classifier"],
    ]


def test_each_group_moves_at_its_own_rate():
    # One SGD step: a variable of group g moves by -lr * decay^(3 - g) *
    # its gradient, i.e. exactly decay^(3 - g) times what plain SGD moves it.
    x, y = _data()
    plain, layerwise = _classifier(), _classifier()
    layerwise.set_weights(plain.get_weights())
    groups = layer_groups(layerwise)
    plain.compile(optimizer=keras.optimizers.SGD(0.5))
    layerwise.compile(optimizer=LayerwiseSGD(0.5, layer_groups=groups,
                                             decay=0.5))
    before = _weights(plain)
    for task in (plain, layerwise):
        task.fit(x, y, batch_size=8, epochs=1, shuffle=False, verbose=0)
    moved_plain, moved_layerwise = _weights(plain), _weights(layerwise)
    checked = set()
    for path, start in before.items():
        step = moved_plain[path] - start
        if np.abs(step).max() < 1e-7:
            continue  # no gradient reached it (e.g. unused embedding rows)
        group = _group_of_path(groups, path)
        np.testing.assert_allclose(moved_layerwise[path] - start,
                                   0.5 ** (3 - group) * step,
                                   rtol=2e-4, atol=1e-7, err_msg=path)
        checked.add(group)
    assert checked == {0, 1, 2, 3}


def test_gradual_unfreezing_trains_one_more_group_each_epoch():
    x, y = _data()
    task = _classifier()
    groups = layer_groups(task)
    task.compile(optimizer=LayerwiseAdamW(1e-2, layer_groups=groups,
                                          decay=1 / 2.6, weight_decay=0.01))
    snapshots = [_weights(task)]

    class Snapshot(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            snapshots.append(_weights(task))

    task.fit(x, y, batch_size=4, epochs=4, shuffle=False, verbose=0,
             callbacks=[GradualUnfreezing(), Snapshot()])
    for epoch in range(4):
        trained = set(range(3 - epoch, 4))  # the top epoch + 1 groups
        for path, start in snapshots[epoch].items():
            moved = np.abs(snapshots[epoch + 1][path] - start).max() > 0
            group = _group_of_path(groups, path)
            # Frozen weights do not move at all (no update, no decay).
            assert moved == (group in trained), (epoch, path)
    # Every group has its scale back at the end.
    scales = [float(to_numpy(s.value)) for s in task.optimizer.group_scales]
    np.testing.assert_allclose(scales, task.optimizer.scales)


def test_slanted_triangular_is_the_papers_formula():
    schedule = SlantedTriangular(0.01, cut_fraction=0.1, ratio=32)
    schedule.plan(200, start_step=0)
    cut = 20
    for t in (0, 5, 19, 20, 21, 100, 199, 200):
        p = t / cut if t < cut else 1 - (t - cut) / (cut * (1 / 0.1 - 1))
        expected = 0.01 * (1 + p * 31) / 32
        assert float(to_numpy(schedule(t))) == pytest.approx(expected,
                                                             rel=1e-5)
    again = SlantedTriangular.from_config(schedule.get_config())
    assert float(to_numpy(again(57))) == pytest.approx(
        float(to_numpy(schedule(57))))


def test_fit_plans_the_slanted_triangular_schedule():
    x, y = _data(16)
    task = _classifier()
    schedule = SlantedTriangular(1e-3)
    task.compile(optimizer=keras.optimizers.Adam(schedule))
    task.fit(x, y, batch_size=4, epochs=5, verbose=0)
    assert (schedule.total_steps, schedule.start_step) == (20, 0)


def test_optimizer_config_round_trips():
    groups = [["a", "b"], ["c"], ["head"]]
    optimizer = LayerwiseAdamW(3e-5, layer_groups=groups, decay=0.9,
                               weight_decay=0.01)
    np.testing.assert_allclose(optimizer.scales, [0.81, 0.9, 1.0])
    again = keras.optimizers.deserialize(
        keras.optimizers.serialize(optimizer))
    assert type(again) is LayerwiseAdamW
    assert again.layer_groups == groups and again.scales == optimizer.scales


@pytest.mark.parametrize("kwargs,message", [
    ({"layer_groups": []}, "layer_groups must be a non-empty list"),
    ({"layer_groups": [["a"], [3]]}, "lists of layer names"),
    ({"layer_groups": [["a"]], "decay": 0.0}, r"decay must be in \(0, 1\]"),
    ({"layer_groups": [["a"], ["b"]], "scales": [1.0]},
     "scales must be 2 numbers >= 0"),
])
def test_bad_layerwise_arguments(kwargs, message):
    with pytest.raises(ValueError, match=message):
        LayerwiseAdamW(1e-3, **kwargs)


def test_gradual_unfreezing_needs_a_layerwise_optimizer():
    x, y = _data()
    task = _classifier()
    task.compile(optimizer=keras.optimizers.Adam(1e-3))
    with pytest.raises(TypeError, match="needs a layer-wise optimizer"):
        task.fit(x, y, epochs=1, verbose=0, callbacks=[GradualUnfreezing()])
    with pytest.raises(ValueError, match="epochs_per_group"):
        GradualUnfreezing(0)
