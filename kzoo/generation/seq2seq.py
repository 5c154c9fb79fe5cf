"""`generate_seq2seq`: encoder inputs in, decoder text (or ids) out.

The encoder-decoder counterpart of `generate.py`'s driver: the same checks
before any work, samplers, compiled loops and outputs; the model
implements the protocol of `encoder_decoder.py`. A model's `generate`
calls this with its own settings (after `use_cache`).

Encoder inputs are right-padded to a power-of-two width (at least 16), so
a handful of compiled programs serve all input lengths; the padding mask
keeps padding out of attention.

A preprocessor, when inputs are text, provides
`generate_preprocess(texts) -> encoder id lists` (the source, with the
special tokens the encoder expects) and
`generate_postprocess(id_lists, stop_token_ids, strip_start) -> texts`
(decoder ids back to text).
"""

import numpy as np

from kzoo.generation.generate import (check_seed, padded, postprocess,
                                      prefill_length, resolve_lengths,
                                      resolve_stop_tokens, run_loop)
from kzoo.generation.inputs import check_ids, read_prompts
from kzoo.generation.settings import (check_controls_names, checked_config,
                                      requested_lengths, resolve_controls,
                                      resolve_sampler)


def encoder_arrays(id_lists, length_limit, pad_token_id):
    """`(token_ids, padding_mask)`, int32 `(batch, width)`, width the
    longest input rounded up to a power of two (capped at `length_limit`)."""
    longest = max(len(ids) for ids in id_lists)
    if length_limit is not None and longest > length_limit:
        which = int(np.argmax([len(ids) for ids in id_lists]))
        raise ValueError(
            f"Input {which} has {longest} tokens, more than the encoder's "
            f"position table ({length_limit} positions); shorten it.")
    width = prefill_length([longest], length_limit or 2 ** 31)
    token_ids = padded(id_lists, width, pad_token_id)
    padding_mask = padded([[1] * len(ids) for ids in id_lists], width, 0)
    return token_ids, padding_mask


def decoder_id_lists(decoder_prompts, batch, decoder_start_token_id,
                     vocabulary_size):
    """One decoder prompt per input: the start token, or the given ids (a
    list of ints for every input, or one list per input)."""
    if decoder_prompts is None:
        return [[int(decoder_start_token_id)] for _ in range(batch)]
    one_for_all = len(decoder_prompts) > 0 and isinstance(
        decoder_prompts[0], (int, np.integer))
    prompts = ([list(decoder_prompts)] * batch if one_for_all
               else [list(p) for p in decoder_prompts])
    if len(prompts) != batch:
        raise ValueError(
            f"generate() got {len(prompts)} decoder prompts for {batch} "
            "inputs; pass one per input, or one list of ids for all.")
    prompts = [[int(t) for t in p] for p in prompts]
    check_ids(prompts, vocabulary_size, "Decoder prompt",
              "a decoder prompt needs at least its start token.")
    return prompts


def generate_seq2seq(model, inputs, max_length=None, sampler=None, *,
                     max_new_tokens=None, decoder_prompts=None,
                     stop_token_ids="auto", strip_prompt=False, seed=None,
                     use_cache=True, generation_config=None,
                     preprocessor=None, vocabulary_size=None,
                     encoder_length_limit=None, position_limit=None,
                     decoder_start_token_id=0, pad_token_id=0,
                     default_stop_token_ids=(), default_max_length=None,
                     **controls):
    """Generate decoder sequences for `inputs` with an encoder-decoder.

    Args (the user-facing ones; a model's `generate` passes the rest):
        inputs: what the encoder reads: text (needs a preprocessor), token
            ids (a list of ints, or one list per input), or a dict with
            `token_ids` and `padding_mask` (right-padded).
        max_length: decoder length, its prompt (the start token) included.
        sampler, max_new_tokens, stop_token_ids, seed, use_cache,
            generation_config, **controls: as for
            `kzoo.generation.generate`.
        decoder_prompts: the decoder's first tokens instead of the start
            token alone (a forced prefix): one list of ids for every input,
            or one list per input; include the start token.
        strip_prompt: return only the new part.

    Model settings: `vocabulary_size` (checked on every id),
    `encoder_length_limit` / `position_limit` (the encoder's and
    decoder's position tables, None where relative positions have no
    limit), `decoder_start_token_id`, `pad_token_id`,
    `default_stop_token_ids` (for `stop_token_ids="auto"`),
    `default_max_length`.

    Returns decoder sequences, in the kind of `inputs` (see
    `kzoo.generation.generate`).

    Example:
    ```python
    from kzoo import generation
    # A tiny random BART; what its generate() runs, the settings given
    # here by hand (BartSeq2SeqLM.generate passes its own).
    backbone = kzoo.BartBackbone(
        vocabulary_size=64, num_layers=1, num_heads=2, hidden_dim=16,
        intermediate_dim=32, max_sequence_length=32)
    bart = kzoo.BartSeq2SeqLM(backbone, preprocessor=None)
    ids = generation.generate_seq2seq(
        bart, [[0, 10, 11, 12, 2]], max_new_tokens=4, vocabulary_size=64,
        decoder_start_token_id=2, pad_token_id=1)
    assert ids[0][0] == 2 and 1 < len(ids[0]) <= 5   # start + new tokens
    ```
    """
    # 1. Check everything before any work.
    check_controls_names(controls)
    settings = checked_config(generation_config)
    sampler = resolve_sampler(sampler, settings)
    source_lists, kind, single = read_prompts(
        inputs, preprocessor, vocabulary_size, noun="Input",
        empty_hint="the encoder needs at least one token.")
    prompt_lists = decoder_id_lists(decoder_prompts, len(source_lists),
                                    decoder_start_token_id, vocabulary_size)
    prompt_lengths = np.array([len(p) for p in prompt_lists], "int32")
    max_length, max_new_tokens = requested_lengths(
        max_length, max_new_tokens, settings)
    max_length, end_positions = resolve_lengths(
        prompt_lengths, max_length, max_new_tokens, position_limit,
        default_max_length)
    stop_token_ids = resolve_stop_tokens(stop_token_ids,
                                         default_stop_token_ids,
                                         vocabulary_size)
    decoding = resolve_controls(controls, settings, vocabulary_size,
                                max_length, max_new_tokens,
                                int(prompt_lengths.max()))
    check_seed(seed)

    # 2. Fixed-shape arrays, right-padded.
    encoder_inputs = encoder_arrays(source_lists, encoder_length_limit,
                                    pad_token_id)
    token_ids = padded(prompt_lists, max_length, pad_token_id)

    # 3. The compiled loop: the encoder once, then the decoder steps.
    sequences, lengths, scores = run_loop(
        model, sampler, token_ids, prompt_lengths, end_positions,
        stop_token_ids, pad_token_id, use_cache, seed,
        encoder_inputs=encoder_inputs, controls=decoding)

    # 4. Back to the caller's kind of output.
    return postprocess(sequences, lengths, prompt_lengths, kind, single,
                       strip_prompt, preprocessor, stop_token_ids,
                       pad_token_id, scores)
