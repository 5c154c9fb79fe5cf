"""`from_preset` with weights does not draw the random values the weights
file overwrites (most of its time for large models); without weights, and
everywhere else, initialisers run as usual."""

import threading

import keras
import numpy as np
import pytest

import kzoo
from helpers import assert_weights_identical, make_tiny_bert
from kzoo.utils.skip_init import initial_values_skipped


class Forbidden(keras.initializers.Initializer):
    def __call__(self, shape, dtype=None):
        raise AssertionError("an initializer ran while loading weights")


@pytest.fixture
def saved(tmp_path):
    backbone = make_tiny_bert(vocabulary_size=97, dropout=0.1)
    backbone.save_to_preset(tmp_path / "tiny")
    return backbone, tmp_path / "tiny"


def test_loading_draws_no_initial_values(saved, monkeypatch):
    original, folder = saved
    monkeypatch.setattr(kzoo.BertBackbone, "kernel_initializer",
                        lambda self: Forbidden())
    monkeypatch.setattr(keras.initializers.TruncatedNormal, "__call__",
                        Forbidden.__call__)
    loaded = kzoo.BertBackbone.from_preset(folder)
    assert_weights_identical(loaded, original)
    with pytest.raises(AssertionError, match="initializer ran"):
        kzoo.BertBackbone.from_preset(folder, load_weights=False)


def test_random_init_and_seed_states_unchanged(saved):
    _, folder = saved
    keras.utils.set_random_seed(3)
    expected = kzoo.BertBackbone.from_preset(folder, load_weights=False)
    keras.utils.set_random_seed(3)
    with initial_values_skipped():
        pass  # leaving the block restores random initialisation
    again = kzoo.BertBackbone.from_preset(folder, load_weights=False)
    assert_weights_identical(again, expected)
    assert np.std(keras.ops.convert_to_numpy(
        again.get_layer("token_embedding").embeddings)) > 0.01
    # Dropout's seed states (integers) are drawn even when values are
    # skipped: a loaded model's dropout is random, not all-zero seeds.
    loaded = kzoo.BertBackbone.from_preset(folder)
    seeds = [keras.ops.convert_to_numpy(v) for v in loaded.variables
             if "seed_generator_state" in v.path]
    assert seeds and any(s.any() for s in seeds)


def test_other_threads_draw_as_usual(saved):
    _, folder = saved
    drawn = {}

    def build_elsewhere():
        drawn["backbone"] = kzoo.BertBackbone.from_preset(
            folder, load_weights=False)

    with initial_values_skipped():
        thread = threading.Thread(target=build_elsewhere)
        thread.start()
        thread.join()
    table = keras.ops.convert_to_numpy(
        drawn["backbone"].get_layer("token_embedding").embeddings)
    assert np.std(table) > 0.01
