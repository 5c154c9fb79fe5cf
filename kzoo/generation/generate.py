"""`generate`: prompts in, text (or token ids) out.

This is the eager driver around the compiled loops: it checks the inputs
(before any work), pads prompts into fixed-shape arrays, picks (or builds
and caches) the compiled loop for this sampler, runs it, and turns the
result back into the caller's kind of input.
"""

import numpy as np

from kzoo.generation import compiled
from kzoo.generation.inputs import read_prompts
from kzoo.generation.loop import beam_search_loop, sampling_loop
from kzoo.generation.controls import DecodingControls
from kzoo.generation.samplers import whole_number
from kzoo.generation.settings import (check_controls_names, checked_config,
                                      requested_lengths, resolve_controls,
                                      resolve_sampler)


def resolve_lengths(prompt_lengths, max_length, max_new_tokens,
                    position_limit, default_max_length=None):
    """`(max_length, end_positions)` after checking every limit."""
    longest = max(prompt_lengths)
    if max_new_tokens is not None:
        max_new_tokens = whole_number("max_new_tokens", max_new_tokens, 1)
    if max_length is None:
        if max_new_tokens is not None:
            max_length = longest + max_new_tokens
        elif default_max_length is not None:
            max_length = int(default_max_length)
        else:
            raise ValueError("generate() needs max_length or max_new_tokens.")
    max_length = whole_number("max_length", max_length, 1)
    if position_limit is not None and max_length > position_limit:
        raise ValueError(
            f"max_length={max_length} is longer than the model's position "
            f"table ({position_limit} positions); use max_length <= "
            f"{position_limit} (and prompts shorter than that).")
    if longest >= max_length:
        which = int(np.argmax(prompt_lengths))
        raise ValueError(
            f"Prompt {which} has {longest} tokens, which leaves no room to "
            f"generate within max_length={max_length}; raise max_length or "
            "shorten the prompt.")
    end_positions = np.full((len(prompt_lengths),), max_length, "int32")
    if max_new_tokens is not None:
        end_positions = np.minimum(
            np.asarray(prompt_lengths, "int32") + max_new_tokens, max_length)
    return max_length, end_positions.astype("int32")


def prefill_length(prompt_lengths, max_length, smallest=16):
    """Positions the prefill computes in parallel: the longest prompt,
    rounded up to a power of two (at least `smallest`, at most
    `max_length`). Rounding keeps the number of compiled programs small
    (their shapes depend on it); covering only the prompts, not the whole
    `max_length`, keeps the prefill cheap."""
    length = smallest
    while length < max(prompt_lengths):
        length *= 2
    return min(length, max_length)


def generate(model, prompts, max_length=None, sampler=None, *,
             max_new_tokens=None, stop_token_ids="auto", strip_prompt=False,
             seed=None, use_cache=True, generation_config=None,
             preprocessor=None, vocabulary_size=None, position_limit=None,
             pad_token_id=0, default_stop_token_ids=(),
             default_max_length=None, **controls):
    """Generate continuations of `prompts` with a causal LM.

    Models call this from their own `generate` method, which fills in the
    model-specific arguments (after `generation_config`, the model's
    generation settings: see `kzoo.generation.settings`). `controls` are
    the decoding controls (`min_length`, `no_repeat_ngram_size`, ...: see
    `kzoo.generation.controls`). See `GPT2CausalLM.generate` for the
    user-facing documentation.

    Example:
    ```python
    # What GPT2CausalLM.generate (every causal LM's generate) runs:
    backbone = kzoo.GPT2Backbone.from_preset(
        "gpt2", load_weights=False, num_layers=1, num_heads=2, hidden_dim=32,
        intermediate_dim=64)
    lm = kzoo.GPT2CausalLM(backbone, preprocessor=kzoo.GPT2CausalLMPreprocessor
                           .from_preset("gpt2", sequence_length=16))
    ids = lm.generate([[15496, 995]], max_new_tokens=3)   # token ids in, out
    assert ids[0][:2] == [15496, 995] and len(ids[0]) <= 5
    ```
    """
    # 1. Check everything before any work.
    check_controls_names(controls)
    settings = checked_config(generation_config)
    sampler = resolve_sampler(sampler, settings)
    id_lists, kind, single = read_prompts(prompts, preprocessor,
                                          vocabulary_size)
    prompt_lengths = np.array([len(ids) for ids in id_lists], "int32")
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
    token_ids = padded(id_lists, max_length, pad_token_id)

    # 3. The compiled loop for this sampler (built once, reused).
    sequences, row_lengths, scores = run_loop(
        model, sampler, token_ids, prompt_lengths, end_positions,
        stop_token_ids, pad_token_id, use_cache, seed, controls=decoding)

    # 4. Back to the caller's kind of output.
    return postprocess(sequences, row_lengths, prompt_lengths, kind, single,
                       strip_prompt, preprocessor, stop_token_ids,
                       pad_token_id, scores)


def resolve_stop_tokens(stop_token_ids, default_stop_token_ids,
                        vocabulary_size=None):
    if isinstance(stop_token_ids, str) and stop_token_ids == "auto":
        stop_token_ids = tuple(default_stop_token_ids)
    if isinstance(stop_token_ids, (int, np.integer)):
        stop_token_ids = (stop_token_ids,)
    stop_token_ids = tuple(
        whole_number("stop_token_ids", t, 0) for t in (stop_token_ids or ()))
    for token_id in stop_token_ids:
        if vocabulary_size is not None and token_id >= vocabulary_size:
            raise ValueError(
                f"generate(): stop token id {token_id} is outside the "
                f"vocabulary [0, {vocabulary_size - 1}], so generation "
                "would never stop on it. Pass ids the tokenizer makes, or "
                "None to never stop early.")
    return stop_token_ids


def check_seed(seed):
    if seed is not None:
        whole_number("seed", seed, 0)


def padded(id_lists, width, pad_token_id):
    """`(batch, width)` int32, each list at the start of its row."""
    token_ids = np.full((len(id_lists), width), pad_token_id, "int32")
    for row, ids in zip(token_ids, id_lists):
        row[:len(ids)] = ids
    return token_ids


def run_loop(model, sampler, token_ids, prompt_lengths, end_positions,
             stop_token_ids, pad_token_id, use_cache, seed,
             encoder_inputs=(), controls=DecodingControls()):
    """Run the compiled loop: `(sequences, lengths, scores)` as numpy;
    `scores` is None unless beam search, and beam results keep every
    beam only with `return_all_beams`."""
    function = compiled_generate_function(
        model, sampler, stop_token_ids, pad_token_id, use_cache, controls)
    rng = compiled.initial_rng(seed)
    max_length = token_ids.shape[1]
    prefix = token_ids[:, :prefill_length(prompt_lengths, max_length)]
    outputs = function(token_ids, prefix, prompt_lengths, end_positions, rng,
                       *encoder_inputs)
    if not sampler.is_beam:
        sequences, lengths = outputs
        return sequences, lengths, None
    sequences, scores, lengths = outputs
    if not sampler.return_all_beams:
        sequences, lengths = sequences[:, 0], lengths[:, 0]
    return sequences, lengths, scores


def postprocess(sequences, lengths, prompt_lengths, kind, single,
                 strip_prompt, preprocessor, stop_token_ids, pad_token_id,
                 scores):
    all_beams = sequences.ndim == 3

    def cut(row, length, prompt_length):
        start = prompt_length if strip_prompt else 0
        return row[start:length].tolist()

    if all_beams:
        id_lists = [[cut(beam, n, p) for beam, n in zip(rows, ns)]
                    for rows, ns, p in zip(sequences, lengths, prompt_lengths)]
    else:
        id_lists = [cut(row, n, p) for row, n, p in
                    zip(sequences, lengths, prompt_lengths)]

    if kind == "text":
        def decode(ids_batch):
            return preprocessor.generate_postprocess(
                ids_batch, stop_token_ids=stop_token_ids,
                strip_start=not strip_prompt)
        if all_beams:
            result = [decode(beams) for beams in id_lists]
        else:
            result = decode(id_lists)
    elif kind == "dict":
        rows = [beams[0] for beams in id_lists] if all_beams else id_lists
        width = max(len(r) for r in rows)
        token_ids = np.full((len(rows), width), pad_token_id, "int32")
        padding_mask = np.zeros((len(rows), width), "bool")
        for i, r in enumerate(rows):
            token_ids[i, :len(r)] = r
            padding_mask[i, :len(r)] = True
        result = {"token_ids": token_ids, "padding_mask": padding_mask}
        if all_beams:
            result["beams"] = id_lists
    else:
        result = id_lists

    if single and kind != "dict":
        result = result[0]
    if all_beams:
        beam_scores = scores[0] if single and kind != "dict" else scores
        return {"sequences": result, "scores": beam_scores}
    return result


def compiled_generate_function(model, sampler, stop_token_ids, pad_token_id,
                               use_cache, controls=DecodingControls()):
    """The model's compiled loop for these settings, built on first use.

    Compiled functions live on the model (`model._generate_functions`), so
    a second `generate` with the same settings and shapes reuses the
    program without tracing again.
    """
    functions = model.__dict__.setdefault("_kzoo_generate_functions", {})
    key = (sampler.cache_key(), tuple(stop_token_ids), int(pad_token_id),
           bool(use_cache), controls)
    if key not in functions:
        def build_loop(decoder):
            # `decoder` is the model, or (torch) a stand-in whose forward
            # passes run as traced graphs; see compiled.TorchTracedDecoder.
            return generate_loop(decoder, sampler, stop_token_ids,
                                 pad_token_id, use_cache, controls)

        functions[key] = compiled.CompiledFunction(build_loop, model)
    return functions[key]


def generate_loop(decoder, sampler, stop_token_ids, pad_token_id,
                  use_cache=True, controls=DecodingControls()):
    """The uncompiled loop of `loop.py` for this sampler (`compiled.py`
    compiles it; an exported generator traces it into its graph)."""
    build = beam_search_loop if sampler.is_beam else sampling_loop
    return build(decoder, sampler, stop_token_ids=stop_token_ids,
                 pad_token_id=pad_token_id, use_cache=use_cache,
                 controls=controls)
