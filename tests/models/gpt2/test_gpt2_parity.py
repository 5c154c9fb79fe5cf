"""kzoo's GPT-2 against Hugging Face `transformers`' (random weights, two
configurations): logits, greedy and beam-search generation, and checkpoint
conversion in both directions."""

import numpy as np
import pytest

import kzoo
from gpt2_testing import (EOS, HF_CONFIGS, PAD, hf_left_padded, hf_pair,
                          random_prompts)
from helpers import to_numpy

import torch
import transformers

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

# Largest |kzoo - transformers| per check, printed with `pytest -s`.
MAX_ABS = {}


@pytest.fixture(scope="module", params=sorted(HF_CONFIGS))
def pair(request):
    return request.param, *hf_pair(request.param)


def test_logits_match_transformers(pair):
    name, hf_model, lm = pair
    vocabulary_size = HF_CONFIGS[name]["vocab_size"]
    rng = np.random.default_rng(1)
    token_ids = rng.integers(0, vocabulary_size, (3, 17)).astype("int32")
    padding_mask = np.ones_like(token_ids)
    padding_mask[1, 11:] = 0
    padding_mask[2, 5:] = 0
    with torch.no_grad():
        expected = hf_model(torch.tensor(token_ids, dtype=torch.long),
                            attention_mask=torch.tensor(padding_mask)).logits
    logits = to_numpy(lm({"token_ids": token_ids,
                          "padding_mask": padding_mask}, training=False))
    real = padding_mask.astype(bool)
    diff = np.abs(logits - expected.numpy())[real].max()
    MAX_ABS[f"logits {name}"] = float(diff)
    print(f"\nGPT-2 config {name}: max |logits - transformers| = {diff:.2e}")
    assert diff <= 1e-5


def test_greedy_matches_transformers(pair):
    # A batch of prompts of unequal length: transformers left-pads them,
    # kzoo right-pads; 32 new tokens each, token for token the same.
    name, hf_model, lm = pair
    prompts = random_prompts([5, 12, 2, 8], HF_CONFIGS[name]["vocab_size"])
    ids, mask = hf_left_padded(prompts)
    with torch.no_grad():
        expected = hf_model.generate(
            ids, attention_mask=mask, max_new_tokens=32, do_sample=False,
            eos_token_id=None, pad_token_id=PAD)
    expected = [p + expected[i, ids.shape[1]:].tolist()
                for i, p in enumerate(prompts)]
    got = lm.generate(prompts, max_new_tokens=32, stop_token_ids=None)
    assert got == expected
    uncached = lm.generate(prompts, max_new_tokens=32, stop_token_ids=None,
                           use_cache=False)
    assert uncached == got


def test_greedy_stop_token_matches_transformers(pair):
    name, hf_model, lm = pair
    prompts = random_prompts([3, 6], HF_CONFIGS[name]["vocab_size"], seed=5)
    # Make the stop token a likely one: the most frequent greedy token.
    free = lm.generate(prompts, max_new_tokens=20, stop_token_ids=None)
    new_tokens = [t for p, g in zip(prompts, free) for t in g[len(p):]]
    stop = int(np.bincount(new_tokens).argmax())
    got = lm.generate(prompts, max_new_tokens=20, stop_token_ids=[stop])
    for prompt, ids in zip(prompts, got):
        with torch.no_grad():
            expected = hf_model.generate(
                torch.tensor([prompt]), max_new_tokens=20, do_sample=False,
                eos_token_id=stop, pad_token_id=PAD)[0].tolist()
        assert ids == expected  # ends at (and keeps) the stop token
        assert ids[-1] == stop or len(ids) == len(prompt) + 20


@pytest.mark.parametrize("num_beams,length_penalty,early_stopping", [
    (3, 1.0, False), (4, 0.6, True), (2, 2.0, "never")])
def test_beam_search_matches_transformers(num_beams, length_penalty,
                                          early_stopping):
    hf_model, lm = hf_pair("a")
    prompts = random_prompts([4, 7, 2], HF_CONFIGS["a"]["vocab_size"], seed=3)
    sampler = kzoo.generation.BeamSampler(
        num_beams=num_beams, length_penalty=length_penalty,
        early_stopping=early_stopping, return_all_beams=True)
    got = lm.generate(prompts, max_new_tokens=10, sampler=sampler,
                      stop_token_ids=[EOS])
    for i, prompt in enumerate(prompts):
        with torch.no_grad():
            out = hf_model.generate(
                torch.tensor([prompt]), max_new_tokens=10, do_sample=False,
                num_beams=num_beams, num_return_sequences=num_beams,
                length_penalty=length_penalty, early_stopping=early_stopping,
                eos_token_id=EOS, pad_token_id=PAD, output_scores=True,
                return_dict_in_generate=True)
        for beam, (ids, hf_ids) in enumerate(zip(got["sequences"][i],
                                                 out.sequences.tolist())):
            # transformers pads shorter beams to the longest with PAD.
            assert hf_ids[:len(ids)] == ids, (i, beam)
            assert all(t == PAD for t in hf_ids[len(ids):]), (i, beam)
        np.testing.assert_allclose(got["scores"][i],
                                   out.sequences_scores.numpy(), atol=1e-4)
    best = lm.generate(prompts, max_new_tokens=10, stop_token_ids=[EOS],
                       sampler=kzoo.generation.BeamSampler(
                           num_beams=num_beams, length_penalty=length_penalty,
                           early_stopping=early_stopping))
    assert best == [beams[0] for beams in got["sequences"]]


def test_checkpoint_round_trip(tmp_path):
    # transformers save_pretrained -> kzoo from_preset -> export_hf ->
    # transformers from_pretrained: the same logits all the way.
    hf_model, _ = hf_pair("b", seed=7)
    hf_model.save_pretrained(tmp_path / "hf")
    lm = kzoo.GPT2CausalLM.from_preset(str(tmp_path / "hf"),
                                       preprocessor=None)
    token_ids = np.array([[3, 1, 4, 1, 5, 9, 2, 6]], "int32")
    inputs = {"token_ids": token_ids, "padding_mask": np.ones_like(token_ids)}
    with torch.no_grad():
        expected = hf_model(torch.tensor(token_ids, dtype=torch.long)).logits
    np.testing.assert_allclose(to_numpy(lm(inputs, training=False)),
                               expected.numpy(), atol=1e-5)
    kzoo.convert.export_hf(lm, tmp_path / "out", verbose=False)
    again = transformers.GPT2LMHeadModel.from_pretrained(tmp_path / "out")
    for key, value in hf_model.state_dict().items():
        if key.endswith(".attn.bias") or key.endswith(".masked_bias"):
            continue
        assert torch.equal(again.state_dict()[key], value), key


def test_classifier_round_trip(tmp_path):
    config = transformers.GPT2Config(
        **HF_CONFIGS["a"], num_labels=3, pad_token_id=PAD, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0)
    torch.manual_seed(2)
    hf_model = transformers.GPT2ForSequenceClassification(config).eval()
    hf_model.save_pretrained(tmp_path / "hf")
    classifier = kzoo.GPT2Classifier.from_preset(str(tmp_path / "hf"),
                                                 preprocessor=None)
    assert classifier.num_classes == 3
    token_ids = np.array([[5, 6, 7, 8, PAD, PAD], [9, 10, 11, 12, 13, 14]],
                         "int32")
    padding_mask = (token_ids != PAD).astype("int32")
    with torch.no_grad():
        expected = hf_model(torch.tensor(token_ids, dtype=torch.long),
                            attention_mask=torch.tensor(padding_mask)).logits
    got = to_numpy(classifier({"token_ids": token_ids,
                               "padding_mask": padding_mask}, training=False))
    np.testing.assert_allclose(got, expected.numpy(), atol=1e-5)
    kzoo.convert.export_hf(classifier, tmp_path / "out", verbose=False)
    again = transformers.GPT2ForSequenceClassification.from_pretrained(
        tmp_path / "out")
    assert torch.equal(again.score.weight, hf_model.score.weight)


@pytest.mark.parametrize("name,sizes", [
    ("gpt2_base_en", dict(n_layer=12, n_head=12, n_embd=768)),
    ("gpt2_medium_en", dict(n_layer=24, n_head=16, n_embd=1024)),
    ("gpt2_large_en", dict(n_layer=36, n_head=20, n_embd=1280)),
    ("gpt2_extra_large_en", dict(n_layer=48, n_head=25, n_embd=1600)),
])
def test_named_presets_match_their_checkpoints(name, sizes):
    # from_preset(name) downloads openai-community/gpt2* and converts it,
    # refusing a checkpoint whose config differs from the preset's: the
    # original configs (transformers' GPT2Config defaults plus the sizes)
    # must map onto the preset configs exactly.
    from kzoo.models.gpt2.convert import GPT2Converter
    hf_config = transformers.GPT2Config(**sizes).to_dict()
    preset = kzoo.presets.resolve(name)
    expected = dict(preset.json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        expected.pop(key)
    assert GPT2Converter().backbone_kwargs(hf_config) == expected
    source = preset.metadata["source"]
    assert source["huggingface"].startswith("openai-community/gpt2")
