"""kzoo.generation: samplers, the generate loop's behaviour, compilation
reuse and bad input (on a tiny GPT-2 with token-id prompts)."""

import keras
import numpy as np
import pytest
from keras import ops

import kzoo
from kzoo.generation import compiled
from kzoo.generation.samplers import (RandomSampler, TopKSampler,
                                      TopPSampler, get_sampler)
from gpt2_testing import random_prompts, tiny_causal_lm

VOCAB = 97


@pytest.fixture(scope="module")
def lm():
    keras.utils.set_random_seed(0)
    return tiny_causal_lm(dropout=0.0, attention_dropout=0.0)


@pytest.fixture(scope="module")
def prompts():
    return random_prompts([3, 7, 5], VOCAB)


# ----------------------------------------------------------------------
# Samplers on their own: statistics
# ----------------------------------------------------------------------
def draw(sampler, logits, seed=0):
    noise, _ = compiled.uniform(compiled.initial_rng(seed), logits.shape,
                                ops.convert_to_tensor(logits))
    return np.asarray(ops.convert_to_numpy(
        sampler(ops.convert_to_tensor(logits), noise)))


def peaked_logits(rows=2000, vocabulary_size=50, seed=0):
    """The same random distribution in every row (so rows are independent
    draws from it)."""
    rng = np.random.default_rng(seed)
    row = rng.normal(0.0, 2.0, vocabulary_size).astype("float32")
    return np.tile(row, (rows, 1))


def test_top_k_never_leaves_the_k_best():
    logits = peaked_logits()
    for k in (1, 3, 10):
        allowed = set(np.argsort(-logits[0])[:k].tolist())
        tokens = draw(TopKSampler(k=k, temperature=1.5), logits, seed=k)
        assert set(tokens.tolist()) <= allowed
        if k > 1:
            assert len(set(tokens.tolist())) > 1  # it does sample


def test_top_p_never_leaves_the_nucleus():
    logits = peaked_logits()
    for p, temperature in ((0.5, 1.0), (0.9, 0.7), (0.99, 1.3)):
        scaled = logits[0] / temperature
        probabilities = np.exp(scaled - scaled.max())
        probabilities /= probabilities.sum()
        order = np.argsort(-probabilities)
        mass_before = np.cumsum(probabilities[order]) - probabilities[order]
        nucleus = set(order[mass_before < p].tolist())
        tokens = draw(TopPSampler(p=p, temperature=temperature), logits,
                      seed=int(p * 100))
        assert set(tokens.tolist()) <= nucleus, (p, temperature)
        assert len(set(tokens.tolist())) > 1


def test_random_sampler_follows_softmax():
    logits = peaked_logits(rows=4000, vocabulary_size=6, seed=3)
    tokens = draw(RandomSampler(temperature=1.0), logits, seed=1)
    expected = np.exp(logits[0] - logits[0].max())
    expected /= expected.sum()
    observed = np.bincount(tokens, minlength=6) / len(tokens)
    np.testing.assert_allclose(observed, expected, atol=0.03)


def test_sampler_names_and_bad_arguments():
    assert isinstance(get_sampler("top_k"), TopKSampler)
    assert get_sampler({"name": "top_p", "p": 0.5}).p == 0.5
    with pytest.raises(ValueError, match="Unknown sampler 'topk'.*top_k"):
        get_sampler("topk")
    with pytest.raises(ValueError, match="p <= 1"):
        TopPSampler(p=1.5)
    with pytest.raises(ValueError, match="k >= 1"):
        TopKSampler(k=0)
    with pytest.raises(ValueError, match="temperature"):
        RandomSampler(temperature=0.0)


# ----------------------------------------------------------------------
# The loop
# ----------------------------------------------------------------------
def test_greedy_is_top_k_1_and_independent_of_batching(lm, prompts):
    greedy = lm.generate(prompts, max_new_tokens=10, stop_token_ids=None)
    assert [len(g) for g in greedy] == [13, 17, 15]
    assert [g[:len(p)] for g, p in zip(greedy, prompts)] == prompts
    top1 = lm.generate(prompts, max_new_tokens=10, stop_token_ids=None,
                       sampler=TopKSampler(k=1), seed=3)
    assert top1 == greedy
    # Each prompt alone gives what it gave in the batch.
    for prompt, expected in zip(prompts, greedy):
        assert lm.generate(prompt, max_new_tokens=10,
                           stop_token_ids=None) == expected


@pytest.mark.parametrize("sampler", ["random", "top_k", "top_p"])
def test_seeded_sampling_is_reproducible(lm, prompts, sampler):
    first = lm.generate(prompts, max_new_tokens=8, sampler=sampler, seed=7,
                        stop_token_ids=None)
    again = lm.generate(prompts, max_new_tokens=8, sampler=sampler, seed=7,
                        stop_token_ids=None)
    other = lm.generate(prompts, max_new_tokens=8, sampler=sampler, seed=8,
                        stop_token_ids=None)
    assert first == again
    assert first != other


def test_cached_and_uncached_agree_for_every_sampler(lm, prompts):
    for sampler in ("greedy", "top_k",
                    kzoo.generation.BeamSampler(num_beams=3)):
        cached = lm.generate(prompts, max_new_tokens=6, sampler=sampler,
                             seed=1, stop_token_ids=None)
        uncached = lm.generate(prompts, max_new_tokens=6, sampler=sampler,
                               seed=1, stop_token_ids=None, use_cache=False)
        assert cached == uncached, sampler


def test_stop_tokens_and_max_length(lm, prompts):
    free = lm.generate(prompts, max_length=20, stop_token_ids=None)
    assert all(len(g) == 20 for g in free)  # max_length counts the prompt
    stop = free[1][8]  # a token the second prompt produces at position 8
    stopped = lm.generate(prompts, max_length=20, stop_token_ids=[stop])
    for ids, full, prompt in zip(stopped, free, prompts):
        new = full[len(prompt):]
        cut = new.index(stop) + 1 if stop in new else len(new)
        assert ids == prompt + new[:cut]
    new_only = lm.generate(prompts, max_length=20, stop_token_ids=[stop],
                           strip_prompt=True)
    assert [p + n for p, n in zip(prompts, new_only)] == stopped


def test_dict_prompts(lm, prompts):
    width = max(len(p) for p in prompts)
    token_ids = np.zeros((3, width), "int32")
    padding_mask = np.zeros((3, width), "bool")
    for i, p in enumerate(prompts):
        token_ids[i, :len(p)] = p
        padding_mask[i, :len(p)] = True
    out = lm.generate({"token_ids": token_ids, "padding_mask": padding_mask},
                      max_new_tokens=4, stop_token_ids=None)
    expected = lm.generate(prompts, max_new_tokens=4, stop_token_ids=None)
    assert out["token_ids"].shape == (3, width + 4)
    for row, mask, e in zip(out["token_ids"], out["padding_mask"], expected):
        assert row[mask].tolist() == e


def test_same_shapes_do_not_recompile():
    # The compiled loop is traced once per shape; new prompts of the same
    # batch size and max_length reuse it.
    lm = tiny_causal_lm()
    first = random_prompts([4, 6], VOCAB, seed=11)
    second = random_prompts([2, 9], VOCAB, seed=12)
    lm.generate(first, max_length=16, sampler="top_p", seed=0)
    function = next(f for key, f in lm._kzoo_generate_functions.items()
                    if key[0][0] == "TopPSampler")
    traces = function.traces
    lm.generate(second, max_length=16, sampler="top_p", seed=1)
    lm.generate(first, max_length=16, sampler=TopPSampler(p=0.9), seed=2)
    assert function.traces == traces
    # jax/tf: one program for the loop; torch: a graph per forward pass
    # (prefill, step).
    assert traces == (2 if keras.backend.backend() == "torch" else 1)
    lm.generate(first, max_length=17, sampler="top_p", seed=0)
    # A new shape is a new program (torch: the step graph only; the
    # prefill's shape did not change).
    assert function.traces == traces + 1


def test_generation_sees_new_weights(lm, prompts):
    # jax gets the variables as arguments: a weight update after the first
    # compile is used by the next call.
    model = tiny_causal_lm()
    before = model.generate(prompts, max_new_tokens=5, stop_token_ids=None)
    for weight in model.backbone.get_layer("layer_norm").weights:
        weight.assign(np.zeros(weight.shape, "float32"))  # equal logits
    after = model.generate(prompts, max_new_tokens=5, stop_token_ids=None)
    assert before != after
    assert all(t == 0 for ids, p in zip(after, prompts) for t in ids[len(p):])


# ----------------------------------------------------------------------
# Bad input: clear errors before any work
# ----------------------------------------------------------------------
def test_bad_input(lm, prompts):
    with pytest.raises(ValueError, match="empty list of prompts"):
        lm.generate([], max_length=10)
    with pytest.raises(ValueError, match="Prompt 1 is empty"):
        lm.generate([[5, 6], []], max_length=10)
    with pytest.raises(ValueError, match="leaves no room"):
        lm.generate(prompts, max_length=6)  # the second prompt has 7 tokens
    with pytest.raises(ValueError, match="position table"):
        lm.generate(prompts, max_length=65)  # the table holds 64
    with pytest.raises(ValueError, match="position table"):
        lm.generate([list(range(2, 70))], max_new_tokens=1)
    with pytest.raises(ValueError, match="Unknown sampler 'beem'"):
        lm.generate(prompts, max_length=10, sampler="beem")
    with pytest.raises(ValueError, match="outside the vocabulary"):
        lm.generate([[5, VOCAB]], max_length=10)
    with pytest.raises(ValueError, match="no preprocessor"):
        lm.generate(["some text"], max_length=10)
    with pytest.raises(ValueError, match="max_length or max_new_tokens"):
        lm.generate(prompts)
    with pytest.raises(ValueError, match="max_new_tokens must be >= 1"):
        lm.generate(prompts, max_new_tokens=0)
