"""The generate loops, written once with keras.ops (compiled per backend in
`compiled.py`).

Everything has a fixed shape, which is what lets XLA compile the loop and
reuse it: prompts are right-padded into `token_ids (batch, max_length)`,
the key/value cache holds `max_length` positions, and the loop writes one
position per step with `slice_update`.

Prompts of different lengths share one loop. Step `index` computes the
token at position `index` of every row from the token at `index - 1`: rows
still inside their prompt keep their prompt token (the model's prediction
is discarded), the others take the sampled one. So each row sees exactly
the positions `0 .. index - 1` of its own text: no left padding, no
position shifting, and keys at or after `index` (padding, or stale values)
are masked out by the causal mask.

The loop asks the model for four things (GPT2CausalLM implements them;
an encoder-decoder model implements the counterparts described in
`encoder_decoder.py`):

    generation_cache(batch, max_length) -> cache (a list of tensors)
    generation_prefill(prefix, cache) -> cache
        writes keys/values of positions `0 .. P - 1` in one parallel
        forward (positions past a row's prompt are overwritten later)
    generation_step(token_ids (batch, 1), cache, index) -> (logits, cache)
        the token at position `index`; logits predict position `index + 1`
    generation_logits(token_ids (batch, max_length), index) -> logits
        without a cache: the whole sequence again (for comparison)

Inputs of both loops: `token_ids (batch, max_length) int32`, `prefix`
(`token_ids[:, :P]`, the part the prefill computes in parallel: `P` covers
the longest prompt, rounded up to a power of two so that a few programs
serve all prompt lengths), `prompt_lengths (batch,)`, `end_positions
(batch,)` (a row stops before this position, `<= max_length`) and `rng`
(see `compiled.initial_rng`). An encoder-decoder model's loop takes two
more: `encoder_token_ids (batch, src)` and `encoder_padding_mask (batch,
src)`, encoded once before the first step.
"""

from keras import ops

from kzoo.generation import compiled
from kzoo.generation.controls import DecodingControls, process
from kzoo.generation.encoder_decoder import decoder_for

_NEG_INF = -1.0e9


def _is_stop_token(tokens, stop_token_ids):
    """Boolean, same shape as `tokens`."""
    if not stop_token_ids:
        return ops.zeros(ops.shape(tokens), dtype="bool")
    stops = ops.convert_to_tensor(list(stop_token_ids), dtype="int32")
    return ops.any(ops.equal(ops.expand_dims(tokens, -1), stops), axis=-1)


def _column(x, index):
    """`x[:, index]` of a `(batch, length)` tensor, `index` a tensor."""
    batch = ops.shape(x)[0]
    return ops.reshape(ops.slice(x, [0, index], [batch, 1]), (batch,))


def _next_logits(model, token_ids, cache, index, use_cache):
    """Logits `(batch, vocab)` for position `index + 1`."""
    if use_cache:
        batch = ops.shape(token_ids)[0]
        token = ops.slice(token_ids, [0, index], [batch, 1])
        logits, cache = model.generation_step(token, cache, index)
    else:
        logits = model.generation_logits(token_ids, index)
    return ops.cast(logits, "float32"), cache


# ----------------------------------------------------------------------
# Greedy and sampling
# ----------------------------------------------------------------------
def sampling_loop(model, sampler, stop_token_ids=(), pad_token_id=0,
                  use_cache=True, controls=DecodingControls()):
    """A function `(token_ids, prefix, prompt_lengths, end_positions, rng,
    *encoder_inputs) -> (token_ids, lengths)`: the generated rows (padded
    with `pad_token_id`) and the number of real tokens in each (the prompt,
    the new tokens and a final stop token if one was produced). The
    `controls` (`controls.py`) act on the logits before the sampler."""
    stop_token_ids = tuple(int(t) for t in stop_token_ids)

    def generate(token_ids, prefix, prompt_lengths, end_positions, rng,
                 *encoder_inputs):
        decoder = decoder_for(model, encoder_inputs)
        token_ids = ops.cast(token_ids, "int32")
        prompt_lengths = ops.cast(prompt_lengths, "int32")
        end_positions = ops.cast(end_positions, "int32")
        # The batch may be unknown until run (an exported generator's
        # graph serves any batch); the length is fixed.
        batch, max_length = ops.shape(token_ids)[0], token_ids.shape[1]
        cache = []
        if use_cache:
            cache = decoder.generation_prefill(
                ops.cast(prefix, "int32"),
                decoder.generation_cache(batch, max_length))

        def cond(index, token_ids, lengths, done, rng, cache):
            return ops.logical_and(
                ops.less(index, max_length),
                ops.logical_not(ops.all(done)))

        def body(index, token_ids, lengths, done, rng, cache):
            logits, cache = _next_logits(decoder, token_ids, cache, index - 1,
                                         use_cache)
            logits = process(controls, logits, token_ids, index,
                             prompt_lengths, end_positions, stop_token_ids)
            noise = None
            if sampler.needs_noise:
                noise, rng = compiled.uniform(rng, ops.shape(logits), logits)
            sampled = sampler(logits, noise)
            in_prompt = ops.less(index, prompt_lengths)
            active = ops.logical_and(ops.logical_not(done),
                                     ops.logical_not(in_prompt))
            token = ops.where(
                in_prompt, _column(token_ids, index),
                ops.where(done, pad_token_id, sampled))
            token = ops.cast(token, "int32")
            token_ids = ops.slice_update(
                token_ids, [0, index], ops.expand_dims(token, 1))
            finished = ops.logical_or(
                _is_stop_token(token, stop_token_ids),
                ops.greater_equal(index + 1, end_positions))
            lengths = ops.where(active, index + 1, lengths)
            done = ops.logical_or(done, ops.logical_and(active, finished))
            return index + 1, token_ids, lengths, done, rng, cache

        index = ops.min(prompt_lengths)
        done = ops.greater_equal(prompt_lengths, end_positions)
        _, token_ids, lengths, _, _, _ = ops.while_loop(
            cond, body,
            (index, token_ids, prompt_lengths, done, rng, cache))
        return token_ids, lengths

    return generate


# ----------------------------------------------------------------------
# Beam search
# ----------------------------------------------------------------------
def _gather_beams(x, beam_indices):
    """`x (batch, beams, ...)` -> `(batch, k, ...)` at `beam_indices
    (batch, k)`."""
    indices = beam_indices
    while len(indices.shape) < len(x.shape):
        indices = ops.expand_dims(indices, -1)
    return ops.take_along_axis(x, indices, axis=1)


def _keep(keep, old, new):
    """`old` where `keep (batch,)`, else `new`, for `(batch, ...)` tensors."""
    mask = keep
    while len(mask.shape) < len(new.shape):
        mask = ops.expand_dims(mask, -1)
    return ops.where(mask, old, new)


def beam_search_loop(model, sampler, stop_token_ids=(), pad_token_id=0,
                     use_cache=True, controls=DecodingControls()):
    """A function `(token_ids, prefix, prompt_lengths, end_positions, rng,
    *encoder_inputs) -> (sequences (batch, beams, max_length), scores
    (batch, beams), lengths (batch, beams))`, beams best first.

    The bookkeeping mirrors Hugging Face `transformers`' vectorised beam
    search (`GenerationMixin._beam_search`) so results agree token for
    token; prompts of different lengths are handled per row (a row inside
    its prompt, or finished, keeps its state). The `controls`
    (`controls.py`) act on each beam's log-probabilities, as transformers'
    logits processors do in its beam search.
    """
    stop_token_ids = tuple(int(t) for t in stop_token_ids)
    num_beams = sampler.num_beams
    length_penalty = sampler.length_penalty
    early_stopping = sampler.early_stopping
    # Enough candidates that `num_beams` survive even when the best ones
    # all end in a stop token.
    candidates = max(2, 1 + len(stop_token_ids)) * num_beams

    def generate(token_ids, prefix, prompt_lengths, end_positions, rng,
                 *encoder_inputs):
        # Beams of a row are adjacent in the flat batch: the encoder state
        # is repeated the same way, and beam reordering never moves a
        # beam to another row, so the state needs no reordering.
        decoder = decoder_for(model, encoder_inputs, repeats=num_beams)
        token_ids = ops.cast(token_ids, "int32")
        prompt_lengths = ops.cast(prompt_lengths, "int32")
        end_positions = ops.cast(end_positions, "int32")
        # The batch may be unknown until run (an exported generator's
        # graph serves any batch); the length is fixed.
        batch, max_length = ops.shape(token_ids)[0], token_ids.shape[1]
        positions = ops.arange(max_length, dtype="int32")
        beam_range = ops.arange(num_beams, dtype="int32")

        # (batch, beams, max_length): every beam starts as the prompt.
        running = ops.repeat(ops.expand_dims(token_ids, 1), num_beams, axis=1)
        # Only the first beam is live at first, so the first step does not
        # pick the same continuation `num_beams` times.
        running_scores = ops.where(
            ops.expand_dims(ops.equal(beam_range, 0), 0), 0.0, _NEG_INF)
        running_scores = ops.repeat(running_scores, batch, axis=0)
        sequences = running
        scores = ops.full((batch, num_beams), _NEG_INF, dtype="float32")
        finished = ops.zeros((batch, num_beams), dtype="bool")
        lengths = ops.repeat(ops.expand_dims(prompt_lengths, 1), num_beams,
                             axis=1)
        improvable = ops.ones((batch,), dtype="bool")
        done = ops.greater_equal(prompt_lengths, end_positions)

        flat_batch = batch * num_beams
        flat_prompt_lengths = ops.repeat(prompt_lengths, num_beams, axis=0)
        flat_end_positions = ops.repeat(end_positions, num_beams, axis=0)
        cache = []
        if use_cache:
            prefix = ops.repeat(ops.cast(prefix, "int32"), num_beams, axis=0)
            cache = decoder.generation_prefill(
                prefix, decoder.generation_cache(flat_batch, max_length))

        def cond(index, *state):
            done = state[-2]
            return ops.logical_and(ops.less(index, max_length),
                                   ops.logical_not(ops.all(done)))

        def body(index, running, running_scores, sequences, scores, finished,
                 lengths, improvable, done, cache):
            flat = ops.reshape(running, (flat_batch, max_length))
            logits, cache = _next_logits(decoder, flat, cache, index - 1,
                                         use_cache)
            vocabulary_size = logits.shape[-1]
            log_probs = ops.log_softmax(logits, axis=-1)
            log_probs = process(controls, log_probs, flat, index,
                                flat_prompt_lengths, flat_end_positions,
                                stop_token_ids)
            log_probs = ops.reshape(log_probs, (batch, num_beams, -1))
            log_probs = log_probs + ops.expand_dims(running_scores, -1)
            log_probs = ops.reshape(log_probs, (batch, -1))

            # The best `candidates` continuations over all beams.
            top_scores, top_indices = ops.top_k(log_probs, k=candidates)
            top_indices = ops.cast(top_indices, "int32")
            top_beams = top_indices // vocabulary_size
            top_tokens = top_indices % vocabulary_size
            top_sequences = _gather_beams(running, top_beams)
            top_sequences = ops.where(
                ops.equal(positions, index), ops.expand_dims(top_tokens, -1),
                top_sequences)
            hits = ops.logical_or(
                _is_stop_token(top_tokens, stop_token_ids),
                ops.expand_dims(ops.greater_equal(index + 1, end_positions),
                                -1))

            # The best unfinished ones run on.
            live_scores = top_scores + ops.cast(hits, "float32") * _NEG_INF
            next_scores, next_indices = ops.top_k(live_scores, k=num_beams)
            next_running = _gather_beams(top_sequences, next_indices)
            parents = _gather_beams(top_beams, ops.cast(next_indices, "int32"))

            # Finished ones among the best `num_beams` join the finished
            # set if they beat its worst member.
            generated = ops.cast(index + 1 - prompt_lengths, "float32")
            penalised = top_scores / ops.expand_dims(
                generated ** length_penalty, -1)
            is_top = ops.expand_dims(
                ops.less(ops.arange(candidates), num_beams), 0)
            just_finished = ops.logical_and(hits, is_top)
            blocked = ops.logical_not(improvable)
            if early_stopping is True:
                blocked = ops.logical_or(blocked, ops.all(finished, axis=1))
            penalised = penalised + ops.expand_dims(
                ops.cast(blocked, "float32"), -1) * _NEG_INF
            penalised = penalised + ops.cast(
                ops.logical_not(just_finished), "float32") * _NEG_INF
            merged_scores = ops.concatenate([scores, penalised], axis=1)
            _, best = ops.top_k(merged_scores, k=num_beams)
            best = ops.cast(best, "int32")
            next_sequences = _gather_beams(
                ops.concatenate([sequences, top_sequences], axis=1), best)
            next_finished_scores = _gather_beams(merged_scores, best)
            next_finished = _gather_beams(
                ops.concatenate([finished, just_finished], axis=1), best)
            candidate_lengths = ops.full((batch, candidates), 1, "int32") * (
                index + 1)
            next_lengths = _gather_beams(
                ops.concatenate([lengths, candidate_lengths], axis=1), best)

            # Could a running beam still beat the worst finished one?
            if early_stopping == "never" and length_penalty > 0.0:
                best_length = ops.cast(end_positions - prompt_lengths,
                                       "float32")
            else:
                best_length = generated
            best_possible = next_scores[:, 0] / best_length ** length_penalty
            worst_finished = ops.where(
                next_finished,
                ops.expand_dims(ops.min(next_finished_scores, axis=1), -1),
                _NEG_INF)
            next_improvable = ops.logical_and(improvable, ops.any(
                ops.expand_dims(best_possible, -1) > worst_finished, axis=1))
            carry_on = ops.logical_and(next_improvable,
                                       ops.logical_not(ops.all(hits, axis=1)))
            if early_stopping is True:
                carry_on = ops.logical_and(
                    carry_on, ops.logical_not(ops.all(next_finished, axis=1)))

            # Rows inside their prompt, or already done, keep their state.
            keep = ops.logical_or(ops.less(index, prompt_lengths), done)
            running = _keep(keep, running, next_running)
            running_scores = _keep(keep, running_scores, next_scores)
            sequences = _keep(keep, sequences, next_sequences)
            scores = _keep(keep, scores, next_finished_scores)
            finished = _keep(keep, finished, next_finished)
            lengths = _keep(keep, lengths, next_lengths)
            improvable = _keep(keep, improvable, next_improvable)
            done = ops.logical_or(done, ops.logical_and(
                ops.logical_not(keep), ops.logical_not(carry_on)))

            if use_cache:
                parents = _keep(keep, ops.expand_dims(beam_range, 0), parents)
                offsets = ops.expand_dims(
                    ops.arange(batch, dtype="int32") * num_beams, -1)
                order = ops.reshape(parents + offsets, (flat_batch,))
                cache = [ops.take(layer, order, axis=0) for layer in cache]
            return (index + 1, running, running_scores, sequences, scores,
                    finished, lengths, improvable, done, cache)

        index = ops.min(prompt_lengths)
        state = ops.while_loop(
            cond, body,
            (index, running, running_scores, sequences, scores, finished,
             lengths, improvable, done, cache))
        _, _, _, sequences, scores, _, lengths, _, _, _ = state
        return sequences, scores, lengths

    return generate
