"""`generate`: prompts in, text (or token ids) out.

This is the eager driver around the compiled loops: it checks the inputs
(before any work), pads prompts into fixed-shape arrays, picks (or builds
and caches) the compiled loop for this sampler, runs it, and turns the
result back into the caller's kind of input.
"""

import numpy as np

from kzoo.generation import compiled
from kzoo.generation.loop import beam_search_loop, sampling_loop
from kzoo.generation.samplers import get_sampler


def _is_text(x):
    return isinstance(x, (str, bytes))


def _prompt_kind(prompts):
    """("text" | "ids" | "dict", single?)"""
    if isinstance(prompts, dict):
        return "dict", False
    if _is_text(prompts):
        return "text", True
    try:
        import tensorflow as tf
        if isinstance(prompts, (tf.Tensor, tf.RaggedTensor)):
            if prompts.dtype == tf.string:
                return "text", prompts.shape.rank == 0
            prompts = prompts.to_list() if isinstance(
                prompts, tf.RaggedTensor) else prompts.numpy()
    except ImportError:  # pragma: no cover
        pass
    if isinstance(prompts, np.ndarray):
        if prompts.dtype.kind in "USO":
            return "text", prompts.ndim == 0
        if prompts.ndim == 1:
            return "ids", True
        return "ids", False
    if isinstance(prompts, (list, tuple)):
        if len(prompts) == 0:
            raise ValueError(
                "generate() got an empty list of prompts; pass at least one "
                "prompt (a string, or a list of token ids).")
        first = prompts[0]
        if _is_text(first):
            if not all(_is_text(p) for p in prompts):
                raise ValueError("generate() prompts mix strings and other "
                                 "types; pass all strings or all id lists.")
            return "text", False
        if isinstance(first, (int, np.integer)):
            return "ids", True
        return "ids", False
    raise ValueError(
        f"generate() takes a string, a list of strings, token ids (a list "
        f"of ints or of lists of ints, or an int array) or a dict with "
        f"'token_ids' and 'padding_mask'; got {type(prompts).__name__}.")


def _id_lists(prompts, kind, single):
    if kind == "dict":
        token_ids = np.asarray(_numpy(prompts["token_ids"]))
        if "padding_mask" in prompts:
            mask = np.asarray(_numpy(prompts["padding_mask"])).astype(bool)
        else:
            mask = np.ones_like(token_ids, dtype=bool)
        if token_ids.ndim != 2:
            raise ValueError("generate(): 'token_ids' must be (batch, seq).")
        if token_ids.shape[0] == 0:
            raise ValueError("generate() got an empty batch of prompts.")
        return [row[m].tolist() for row, m in zip(token_ids, mask)]
    prompts = _numpy(prompts)
    if single:
        prompts = [prompts]
    lists = []
    for prompt in prompts:
        prompt = np.asarray(_numpy(prompt))
        if prompt.ndim != 1 or (prompt.size and prompt.dtype.kind not in "iu"):
            raise ValueError(
                "generate(): each prompt of token ids must be a flat list of "
                f"ints; got an array of shape {prompt.shape} and dtype "
                f"{prompt.dtype}.")
        lists.append([int(t) for t in prompt])
    if not lists:
        raise ValueError("generate() got an empty batch of prompts.")
    return lists


def _numpy(x):
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):
        try:
            return x.numpy()
        except Exception:  # noqa: BLE001 - torch tensors need .cpu()
            pass
    try:
        import keras
        if keras.ops.is_tensor(x):
            return keras.ops.convert_to_numpy(x)
    except Exception:  # noqa: BLE001
        pass
    return x


def resolve_lengths(prompt_lengths, max_length, max_new_tokens,
                    position_limit, default_max_length=None):
    """`(max_length, end_positions)` after checking every limit."""
    longest = max(prompt_lengths)
    if max_new_tokens is not None:
        max_new_tokens = int(max_new_tokens)
        if max_new_tokens < 1:
            raise ValueError(
                f"max_new_tokens must be >= 1, got {max_new_tokens}.")
    if max_length is None:
        if max_new_tokens is not None:
            max_length = longest + max_new_tokens
        elif default_max_length is not None:
            max_length = int(default_max_length)
        else:
            raise ValueError("generate() needs max_length or max_new_tokens.")
    max_length = int(max_length)
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


def generate(model, prompts, max_length=None, sampler="greedy", *,
             max_new_tokens=None, stop_token_ids="auto", strip_prompt=False,
             seed=None, use_cache=True, preprocessor=None,
             vocabulary_size=None, position_limit=None, pad_token_id=0,
             default_stop_token_ids=(), default_max_length=None):
    """Generate continuations of `prompts` with a causal LM.

    Models call this from their own `generate` method, which fills in the
    model-specific arguments (after `use_cache`). See
    `GPT2CausalLM.generate` for the user-facing documentation.
    """
    # 1. Check everything before any work.
    sampler = get_sampler(sampler)
    kind, single = _prompt_kind(prompts)
    if kind == "text":
        if preprocessor is None:
            raise ValueError(
                "generate() got text, but the model has no preprocessor to "
                "tokenize it; pass token ids, or build the model with a "
                "preprocessor (e.g. from_preset).")
        texts = [prompts] if single else list(_numpy(prompts))
        texts = [t.decode("utf-8") if isinstance(t, bytes) else str(t)
                 for t in texts]
        id_lists = preprocessor.generate_preprocess(texts)
    else:
        id_lists = _id_lists(prompts, kind, single)
    for i, ids in enumerate(id_lists):
        if len(ids) == 0:
            raise ValueError(
                f"Prompt {i} is empty: a prompt needs at least one token to "
                "condition on (text prompts get a start token from the "
                "preprocessor).")
        if vocabulary_size is not None:
            low, high = min(ids), max(ids)
            if low < 0 or high >= vocabulary_size:
                raise ValueError(
                    f"Prompt {i} holds token id {high if high >= vocabulary_size else low}, "
                    f"outside the vocabulary [0, {vocabulary_size - 1}].")
    prompt_lengths = np.array([len(ids) for ids in id_lists], "int32")
    max_length, end_positions = resolve_lengths(
        prompt_lengths, max_length, max_new_tokens, position_limit,
        default_max_length)
    if isinstance(stop_token_ids, str) and stop_token_ids == "auto":
        stop_token_ids = tuple(default_stop_token_ids)
    stop_token_ids = tuple(int(t) for t in (stop_token_ids or ()))

    # 2. Fixed-shape arrays, right-padded.
    token_ids = np.full((len(id_lists), max_length), pad_token_id, "int32")
    for row, ids in zip(token_ids, id_lists):
        row[:len(ids)] = ids

    # 3. The compiled loop for this sampler (built once, reused).
    function = compiled_generate_function(
        model, sampler, stop_token_ids, pad_token_id, use_cache)
    rng = compiled.initial_rng(seed)
    prefix = token_ids[:, :prefill_length(prompt_lengths, max_length)]
    outputs = function(token_ids, prefix, prompt_lengths, end_positions, rng)

    # 4. Back to the caller's kind of output.
    if sampler.is_beam:
        sequences, scores, lengths = outputs
        if not sampler.return_all_beams:
            sequences, lengths = sequences[:, 0], lengths[:, 0]
    else:
        sequences, lengths = outputs
        scores = None
    return _postprocess(sequences, lengths, prompt_lengths, kind, single,
                        strip_prompt, preprocessor, stop_token_ids,
                        pad_token_id, scores)


def _postprocess(sequences, lengths, prompt_lengths, kind, single,
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
                               use_cache):
    """The model's compiled loop for these settings, built on first use.

    Compiled functions live on the model (`model._generate_functions`), so
    a second `generate` with the same settings and shapes reuses the
    program without tracing again.
    """
    functions = model.__dict__.setdefault("_kzoo_generate_functions", {})
    key = (sampler.cache_key(), tuple(stop_token_ids), int(pad_token_id),
           bool(use_cache))
    if key not in functions:
        build = beam_search_loop if sampler.is_beam else sampling_loop

        def build_loop(decoder):
            # `decoder` is the model, or (torch) a stand-in whose forward
            # passes run as traced graphs; see compiled.TorchTracedDecoder.
            return build(decoder, sampler, stop_token_ids=stop_token_ids,
                         pad_token_id=pad_token_id, use_cache=use_cache)

        functions[key] = compiled.CompiledFunction(build_loop, model)
    return functions[key]
