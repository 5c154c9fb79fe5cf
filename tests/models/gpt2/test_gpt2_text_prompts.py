"""Text in, the reference's tokens out: GPT-2 text prompts are tokenized as
`transformers`' tokenizer does (the prompt alone, no `<|endoftext|>` first,
as OpenAI's conditional sampler `encoder.encode(raw_text)`), so greedy
generation from text matches `GPT2LMHeadModel.generate` token for token."""

import pytest
import torch
import transformers

import kzoo
from gpt2_testing import hf_left_padded, hf_pair

END = 50256
PROMPTS = ["It is a truth universally acknowledged", "Mr. Bennet",
           " Café au lait, s'il vous plaît"]
NEW_TOKENS = 10


@pytest.fixture(scope="module")
def models():
    """A tiny random GPT-2 on the real 50,257-token vocabulary, in kzoo
    (with the `gpt2` preset's tokenizer) and in transformers (with
    GPT2Tokenizer reading the same vocab.json and merges.txt)."""
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    preprocessor = kzoo.GPT2CausalLMPreprocessor(tokenizer,
                                                 sequence_length=32)
    hf_model, lm = hf_pair("a", preprocessor=preprocessor, vocab_size=50257)
    hf_tokenizer = transformers.GPT2Tokenizer(
        vocab=str(tokenizer.vocabulary), merges=str(tokenizer.merges))
    return hf_model, hf_tokenizer, lm


def hf_greedy(hf_model, prompts):
    """transformers' greedy continuations (`NEW_TOKENS` each, no stop) of
    id prompts, as `prompt + new` id lists."""
    ids, mask = hf_left_padded(prompts)
    with torch.no_grad():
        out = hf_model.generate(ids, attention_mask=mask, do_sample=False,
                                max_new_tokens=NEW_TOKENS, eos_token_id=None,
                                pad_token_id=0)
    return [p + out[i, ids.shape[1]:].tolist() for i, p in enumerate(prompts)]


def test_text_prompts_generate_as_transformers(models):
    hf_model, hf_tokenizer, lm = models
    prompt_ids = [hf_tokenizer(p).input_ids for p in PROMPTS]
    assert lm.preprocessor.generate_preprocess(PROMPTS) == prompt_ids
    expected = hf_greedy(hf_model, prompt_ids)
    got = lm.generate(PROMPTS, max_new_tokens=NEW_TOKENS,
                      stop_token_ids=None)
    assert got == [hf_tokenizer.decode(ids) for ids in expected]
    new = lm.generate(PROMPTS, max_new_tokens=NEW_TOKENS, stop_token_ids=None,
                      strip_prompt=True)
    assert new == [hf_tokenizer.decode(ids[len(p):])
                   for ids, p in zip(expected, prompt_ids)]


def test_start_token_on_request_and_for_empty_prompts(models):
    # prompt_start_token=True conditions on <|endoftext|> + prompt (what
    # GPT-2 saw at a document boundary); an empty prompt always starts
    # from <|endoftext|>, as transformers' generate without input ids
    # (bos_token_id) and OpenAI's unconditional sampler. The start token
    # is not part of the returned text.
    hf_model, hf_tokenizer, lm = models
    with_start = kzoo.GPT2CausalLMPreprocessor(
        lm.preprocessor.tokenizer, sequence_length=32,
        prompt_start_token=True)
    assert with_start.generate_preprocess(PROMPTS[:1]) == \
        [[END] + hf_tokenizer(PROMPTS[0]).input_ids]
    assert lm.preprocessor.generate_preprocess([""]) == [[END]]
    expected = hf_greedy(hf_model, [[END] + hf_tokenizer(PROMPTS[0]).input_ids,
                                    [END]])
    got = lm.generate(PROMPTS[:1] + [""], max_new_tokens=NEW_TOKENS,
                      stop_token_ids=None)
    assert got[1] == hf_tokenizer.decode(expected[1][1:])
    lm_with_start = kzoo.GPT2CausalLM(lm.backbone, preprocessor=with_start)
    got = lm_with_start.generate(PROMPTS[:1], max_new_tokens=NEW_TOKENS,
                                 stop_token_ids=None)
    assert got == [hf_tokenizer.decode(expected[0][1:])]
