"""`generate` (kzoo.generation): bad lengths, samplers, prompts, stop
tokens and seeds, for every registered task that generates. Everything
here is refused before the loop is compiled."""

import numpy as np
import pytest

from bad_input_models import shared_task
from kzoo.generation import get_sampler
from kzoo.tasks.seq2seq_lm import Seq2SeqLM
from kzoo.core.task import Task
from text_testing import registered

GENERATORS = [cls for cls in registered(Task) if hasattr(cls, "generate")]
PROMPT = [[2, 3, 4]]

CASES = {
    # lengths
    "max_new_tokens_zero": (dict(max_new_tokens=0),
                            "max_new_tokens must be >= 1"),
    "max_new_tokens_negative": (dict(max_new_tokens=-1),
                                "max_new_tokens must be >= 1"),
    "max_new_tokens_fraction": (dict(max_new_tokens=1.5),
                                r"max_new_tokens must be a whole number.*1.5"),
    "max_new_tokens_text": (dict(max_new_tokens="3"),
                            r"max_new_tokens must be a whole number.*'3'"),
    "max_length_zero": (dict(max_length=0), "max_length must be >= 1"),
    "max_length_too_short": (dict(max_length=2), "leaves no room"),
    "max_length_past_the_table": (dict(max_length=10**6), "position table"),
    # samplers
    "unknown_sampler": (dict(max_new_tokens=2, sampler="topk"),
                        "Unknown sampler 'topk'.*Did you mean 'top_k'"),
    "sampler_of_a_wrong_type": (dict(max_new_tokens=2, sampler=3),
                                "sampler must be a name"),
    "sampler_unknown_argument": (dict(max_new_tokens=2,
                                      sampler={"name": "top_k", "kk": 3}),
                                 "takes k, temperature; got unknown 'kk'"),
    "top_k_zero": (dict(max_new_tokens=2, sampler={"name": "top_k", "k": 0}),
                   "top_k needs k >= 1"),
    "top_k_fraction": (dict(max_new_tokens=2,
                            sampler={"name": "top_k", "k": 2.5}),
                       "k must be a whole number"),
    "top_p_zero": (dict(max_new_tokens=2, sampler={"name": "top_p", "p": 0}),
                   "top_p needs 0 < p <= 1"),
    "top_p_above_one": (dict(max_new_tokens=2,
                             sampler={"name": "top_p", "p": 1.5}),
                        "top_p needs 0 < p <= 1"),
    "top_p_nan": (dict(max_new_tokens=2,
                       sampler={"name": "top_p", "p": float("nan")}),
                  "p must be a finite number"),
    "temperature_zero": (dict(max_new_tokens=2, sampler={
        "name": "random", "temperature": 0.0}), "temperature must be > 0"),
    "temperature_infinite": (dict(max_new_tokens=2, sampler={
        "name": "random", "temperature": float("inf")}),
        "temperature must be a finite number"),
    "temperature_text": (dict(max_new_tokens=2, sampler={
        "name": "top_k", "temperature": "hot"}),
        "temperature must be a finite number; got 'hot'"),
    "num_beams_zero": (dict(max_new_tokens=2,
                            sampler={"name": "beam", "num_beams": 0}),
                       "num_beams must be >= 1"),
    "num_beams_fraction": (dict(max_new_tokens=2,
                                sampler={"name": "beam", "num_beams": 2.5}),
                           "num_beams must be a whole number"),
    "early_stopping_unknown": (dict(max_new_tokens=2, sampler={
        "name": "beam", "early_stopping": "sometimes"}),
        "early_stopping must be True, False or 'never'"),
    # stop tokens, seeds
    "stop_token_negative": (dict(max_new_tokens=2, stop_token_ids=[-5]),
                            "stop_token_ids must be >= 0"),
    "stop_token_outside_vocabulary": (dict(max_new_tokens=2,
                                           stop_token_ids=[10**7]),
                                      "stop token id 10000000 is outside"),
    "seed_text": (dict(max_new_tokens=2, sampler="random", seed="x"),
                  "seed must be a whole number"),
}

# An encoder-decoder reads PROMPT with its encoder; its decoder starts
# from the start token alone, so max_length=2 leaves room for one token.
SEQ2SEQ_CASES = {
    "max_length_too_short": (dict(max_length=1), "leaves no room"),
}

PROMPT_CASES = {
    "no_prompts": ([], "empty list of prompts"),
    "an_empty_prompt": ([[2, 3], []], "Prompt 1 is empty"),
    "none": (None, "generate\\(\\) takes a string.*got NoneType"),
    "float_ids": ([[2.5, 3.0]], "flat list of ints.*float64"),
    "id_outside_vocabulary": ([[2, 10**7]], "outside the vocabulary"),
    "mixed_text_and_ids": (["a", [1]], "mix strings and other types"),
    "dict_without_token_ids": ({"padding_mask": np.ones((1, 3))},
                               "needs 'token_ids'"),
}


@pytest.fixture(scope="module", params=GENERATORS, ids=lambda c: c.__name__)
def lm(request):
    return shared_task(request.param)


@pytest.mark.parametrize("case", sorted(CASES))
def test_bad_generate_arguments(lm, case):
    kwargs, phrase = CASES[case]
    if isinstance(lm, Seq2SeqLM):
        kwargs, phrase = SEQ2SEQ_CASES.get(case, (kwargs, phrase))
    if case == "max_length_past_the_table" and \
            lm.backbone.max_sequence_length is None:
        # Relative positions (T5): no table, so no length is past it; a
        # million-token request is a real (and huge) decode, not an error.
        pytest.skip(f"{type(lm).__name__} has no position table")
    with pytest.raises(ValueError, match=phrase):
        lm.generate(PROMPT, **kwargs)


@pytest.mark.parametrize("case", sorted(PROMPT_CASES))
def test_bad_prompts(lm, case):
    prompts, phrase = PROMPT_CASES[case]
    if isinstance(lm, Seq2SeqLM):  # the prompts are the encoder's inputs
        phrase = phrase.replace("Prompt ", "Input ")
    with pytest.raises(ValueError, match=phrase):
        lm.generate(prompts, max_new_tokens=2)


def test_text_without_a_preprocessor():
    for cls in GENERATORS:
        task = shared_task(cls)
        bare = cls(task.backbone)
        with pytest.raises(ValueError, match="no preprocessor"):
            bare.generate("Once upon a time", max_new_tokens=2)
        with pytest.raises(ValueError, match="max_length or max_new_tokens"):
            bare.generate(PROMPT)


def test_get_sampler_bad_spec():
    with pytest.raises(ValueError, match="a dict with a 'name'"):
        get_sampler({"k": 3})
