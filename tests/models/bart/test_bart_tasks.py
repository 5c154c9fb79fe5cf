"""BartSeq2SeqLM from raw (input, target) text: packing as transformers
fine-tunes BART, fit lowers the loss on real text, generate (cached ==
uncached, samplers, text out), presets save and load, the backbone
contract, tensor-parallel layouts."""

import numpy as np
import pytest

import kzoo
from bart_testing import (BART_PRESET, fit_batch_losses, make_tiny_bart,
                          random_bart_inputs)
from helpers import assert_weights_identical, austen_passages, to_numpy


def _preprocessor(**kwargs):
    return kzoo.BartSeq2SeqLMPreprocessor.from_preset(
        str(BART_PRESET), **{"sequence_length": 32, "target_length": 16,
                             **kwargs})


@pytest.fixture(scope="module")
def lm():
    import keras
    keras.utils.set_random_seed(0)
    return kzoo.BartSeq2SeqLM(make_tiny_bart(dropout=0.0),
                              preprocessor=_preprocessor())


def _pairs(n=64):
    # Real text: the input is a passage of Pride and Prejudice, the target
    # its first words.
    passages = austen_passages("pride_and_prejudice", words=20)[:n]
    return passages, [" ".join(p.split()[:6]) for p in passages]


def test_packing_is_transformers_fine_tuning(tmp_path):
    """Encoder `<s> input </s>`, labels `<s> target </s>`, decoder the
    labels shifted right after `</s>`: what transformers' BartTokenizer and
    `shift_tokens_right` give, on the exported tokenizer."""
    transformers = pytest.importorskip("transformers")
    from transformers.models.bart.modeling_bart import shift_tokens_right
    import torch
    from kzoo.convert import export_hf
    preprocessor = _preprocessor()
    task = kzoo.BartSeq2SeqLM(make_tiny_bart(), preprocessor=preprocessor)
    out = export_hf(task, tmp_path / "exported", verbose=False)
    hf_tokenizer = transformers.AutoTokenizer.from_pretrained(out)
    assert isinstance(hf_tokenizer, transformers.BartTokenizer)
    inputs, targets = _pairs(4)
    inputs[1] = inputs[1] + " and <mask> more words " * 6  # cut to 32
    x, y, weights = preprocessor((inputs, targets))
    source = hf_tokenizer(inputs, padding="max_length", truncation=True,
                          max_length=32)
    labels = hf_tokenizer(text_target=targets, padding="max_length",
                          truncation=True, max_length=16)
    np.testing.assert_array_equal(to_numpy(x["encoder_token_ids"]),
                                  source["input_ids"])
    np.testing.assert_array_equal(to_numpy(x["encoder_padding_mask"]),
                                  source["attention_mask"])
    np.testing.assert_array_equal(to_numpy(y), labels["input_ids"])
    np.testing.assert_array_equal(to_numpy(weights),
                                  labels["attention_mask"])
    shifted = shift_tokens_right(torch.tensor(labels["input_ids"]), 1, 2)
    np.testing.assert_array_equal(to_numpy(x["decoder_token_ids"]),
                                  shifted.numpy())


@pytest.mark.convergence
def test_fit_on_text_pairs_lowers_the_loss(lm):
    import keras
    inputs, targets = _pairs(16)
    # A tiny model from scratch, 8 steps at a constant rate, 4 times over
    # the same 16 pairs in one epoch (a new epoch, a new tf.data pipeline:
    # slow to start for byte-level BPE): the last steps' loss is well
    # below the first ones'.
    lm.compile(optimizer=keras.optimizers.Adam(1e-2))
    losses = fit_batch_losses(lm, (inputs * 4, targets * 4),
                              batch_size=8)
    assert len(losses) == 8
    assert losses[0] > 9.0  # started near log(50265)
    assert losses[-2:].mean() < losses[:2].mean() - 0.5, losses


def test_generate_cached_equals_uncached(lm):
    prompts = ["It is a truth universally acknowledged.",
               "Mr. Bennet was so odd a mixture of quick parts"]
    cached = lm.generate(prompts, max_new_tokens=6)
    assert all(isinstance(t, str) for t in cached)
    assert not any("<s>" in t or "</s>" in t for t in cached)
    assert cached == lm.generate(prompts, max_new_tokens=6, use_cache=False)
    ids = lm.preprocessor.generate_preprocess(prompts)
    assert all(row[0] == 0 and row[-1] == 2 for row in ids)  # <s> .. </s>
    by_ids = lm.generate(ids, max_new_tokens=6, stop_token_ids=None)
    assert [row[0] for row in by_ids] == [2, 2]  # the decoder start
    sampled = lm.generate(ids, max_new_tokens=6, stop_token_ids=None,
                          sampler="top_k", seed=3)
    assert sampled == lm.generate(ids, max_new_tokens=6, seed=3,
                                  stop_token_ids=None, sampler="top_k",
                                  use_cache=False)


def test_task_preset_round_trip(lm, tmp_path):
    lm.save_to_preset(tmp_path / "bart_task")
    loaded = kzoo.BartSeq2SeqLM.from_preset(str(tmp_path / "bart_task"))
    assert type(loaded.preprocessor) is kzoo.BartSeq2SeqLMPreprocessor
    assert loaded.preprocessor.target_length == 16
    assert_weights_identical(loaded, lm)
    x, _, _ = lm.preprocessor(_pairs(3))
    np.testing.assert_array_equal(to_numpy(loaded(x)), to_numpy(lm(x)))


@pytest.mark.large  # builds the 139M-parameter model
def test_named_presets_build():
    task = kzoo.BartSeq2SeqLM.from_preset("bart_base", load_weights=False,
                                          preprocessor=None)
    backbone = task.backbone
    assert (backbone.num_layers, backbone.num_decoder_layers,
            backbone.hidden_dim, backbone.max_sequence_length) == \
        (6, 6, 768, 1024)
    # The released bart-base: 139,420,416 parameters (the two unused
    # position rows of each stack included, as transformers counts them).
    assert backbone.count_params() == 139_420_416
    large = kzoo.presets.resolve("bart_large").json("config.json")
    assert large["config"]["num_layers"] == 12
    assert large["config"]["hidden_dim"] == 1024


def test_named_presets_are_registered():
    from kzoo import presets
    for name, alias, layers, width in (("bart_base_en", "bart_base", 6, 768),
                                       ("bart_large_en", "bart_large", 12,
                                        1024)):
        preset = presets.resolve(alias)
        assert preset.name == name
        entry = preset.json("config.json")
        assert entry["class_name"] == "BartBackbone"
        config = entry["config"]
        assert (config["num_layers"], config["hidden_dim"]) == \
            (layers, width)
        kzoo.BartBackbone.check_config(
            {k: v for k, v in config.items()
             if k not in ("name", "trainable", "dtype")})
        assert preset.json("tokenizer.json")["class_name"] == \
            "BartTokenizer"


def test_backbone_contract(tmp_path):
    from helpers import check_backbone
    # A small vocabulary: the contract is about the layers.
    backbone = make_tiny_bart(vocabulary_size=97, num_decoder_layers=1,
                              num_decoder_heads=4,
                              decoder_intermediate_dim=24,
                              scale_embedding=True)
    inputs = random_bart_inputs(backbone.vocabulary_size, source=9,
                                target=9)
    check_backbone(backbone, inputs, tmp_path)


def test_layout_map_splits_both_stacks():
    import keras
    from kzoo.distribution.layouts import expected_axes, unmatched_rules
    mesh = keras.distribution.DeviceMesh(
        shape=(2, 4), axis_names=("batch", "model"),
        devices=[f"cpu:{i}" for i in range(8)])
    backbone = make_tiny_bart(vocabulary_size=97)
    layout_map = kzoo.BartBackbone.get_layout_map(mesh)
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
