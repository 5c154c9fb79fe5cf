"""T5Seq2SeqLM from raw (input, target) text: fit lowers the loss on real
text, generate (cached == uncached, samplers), presets save and load."""

import numpy as np
import pytest

import kzoo
from helpers import assert_weights_identical, austen_passages, to_numpy
from t5_testing import T5_PRESET, make_tiny_t5


def _preprocessor(**kwargs):
    return kzoo.T5Preprocessor.from_preset(
        str(T5_PRESET), **{"sequence_length": 32, "target_length": 16,
                           **kwargs})


@pytest.fixture(scope="module")
def lm():
    import keras
    keras.utils.set_random_seed(0)
    # One layer a stack: these tests are about the task (fit, generate,
    # presets); the backbone contract and the parity tests cover depth.
    return kzoo.T5Seq2SeqLM(make_tiny_t5(dropout=0.0, num_layers=1,
                                         num_decoder_layers=1),
                            preprocessor=_preprocessor())


def _pairs(n=64):
    # Real text: the input is a passage of Pride and Prejudice, the target
    # its first words ("summarize" the passage by its opening).
    passages = austen_passages("pride_and_prejudice", words=20)[:n]
    return (["summarize: " + p for p in passages],
            [" ".join(p.split()[:6]) for p in passages])


@pytest.mark.convergence
def test_fit_on_text_pairs_lowers_the_loss(lm):
    import keras
    x = _pairs(32)
    # A tiny model from scratch, a few steps: a constant rate (the default
    # warms up and decays over so short a run). One batch per epoch, so
    # the history's first entry is the untrained model's loss (no
    # `evaluate`: its program would cost more than the training).
    lm.compile(optimizer=keras.optimizers.Adam(2e-2))
    history = lm.fit(x, batch_size=32, epochs=5, verbose=0).history
    losses, accuracy = history["loss"], history["accuracy"]
    assert np.all(np.isfinite(losses)), losses
    assert losses[-1] < losses[0] - 0.5, losses
    assert accuracy[-1] > accuracy[0], accuracy


def test_generate_cached_equals_uncached(lm):
    prompts = ["summarize: It is a truth universally acknowledged.",
               "summarize: Mr. Bennet was so odd a mixture"]
    cached = lm.generate(prompts, max_new_tokens=6)
    assert all(isinstance(t, str) for t in cached)
    uncached = lm.generate(prompts, max_new_tokens=6, use_cache=False)
    assert cached == uncached
    ids = lm.preprocessor.generate_preprocess(prompts)
    assert all(row[-1] == 1 for row in ids)  # </s> ends every input
    # The same ids as the text (and so the same compiled programs).
    by_ids = lm.generate(ids, max_new_tokens=6)
    assert [row[0] for row in by_ids] == [0, 0]  # the decoder start
    assert lm.preprocessor.generate_postprocess(by_ids, [1]) == cached
    assert by_ids == lm.generate(ids, max_new_tokens=6, use_cache=False)
    # Sampled, never stopping early: every step cached as uncached.
    sampled = lm.generate(ids, max_new_tokens=6, stop_token_ids=None,
                          sampler="top_k", seed=3)
    assert sampled == lm.generate(ids, max_new_tokens=6, seed=3,
                                  stop_token_ids=None, sampler="top_k",
                                  use_cache=False)


def test_task_preset_round_trip(lm, tmp_path):
    lm.save_to_preset(tmp_path / "t5_task")
    loaded = kzoo.T5Seq2SeqLM.from_preset(str(tmp_path / "t5_task"))
    assert type(loaded.preprocessor) is kzoo.T5Preprocessor
    assert loaded.preprocessor.target_length == 16
    assert_weights_identical(loaded, lm)
    x, _, _ = lm.preprocessor(_pairs(3))
    np.testing.assert_array_equal(to_numpy(loaded(x)), to_numpy(lm(x)))


@pytest.mark.parametrize("tied", [True, False])
def test_backbone_contract(tied, tmp_path):
    from helpers import check_backbone
    from t5_testing import random_t5_inputs
    backbone = make_tiny_t5(tie_word_embeddings=tied,
                            gated_feed_forward=not tied)
    # A batch of 4: check_backbone predicts in batches of 2, one shape.
    inputs = random_t5_inputs(backbone.vocabulary_size, batch=4, source=9,
                              target=9)
    check_backbone(backbone, inputs, tmp_path)


def test_layout_map_splits_both_stacks():
    import keras
    from kzoo.distribution.layouts import expected_axes, unmatched_rules
    mesh = keras.distribution.DeviceMesh(
        shape=(2, 4), axis_names=("batch", "model"),
        devices=[f"cpu:{i}" for i in range(8)])
    backbone = make_tiny_t5(gated_feed_forward=True)
    layout_map = kzoo.T5Backbone.get_layout_map(mesh)
    assert unmatched_rules(layout_map, backbone.weights) == []
    kernels = [w for w in backbone.weights if "transformer_layer_" in w.path
               and w.path.endswith("/kernel")]
    assert any("decoder_transformer_layer_1/cross_attention" in w.path
               for w in kernels)
    for weight in kernels:  # every block kernel, both stacks, is split
        axes = expected_axes(layout_map, weight.path, 2)
        out_projection = weight.path.endswith(("output/kernel",
                                               "output_dense/kernel"))
        assert axes == (("model", None) if out_projection
                        else (None, "model")), weight.path
