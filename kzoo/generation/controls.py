"""Decoding controls: the logits processors `transformers` applies for the
checkpoints' generation settings, one function each, in keras.ops, run by
both generate loops (`loop.py`) inside their compiled programs.

Each function takes the scores of the next token `(rows, vocab)` (logits
for greedy and sampling; log-probabilities for beam search, as
transformers' beam search processes them), the rows written so far
`token_ids (rows, max_length)` and `index`, the position being decided
(so `index` tokens are known: transformers' `input_ids.shape[-1]`), and
returns new scores. Banned tokens score `-inf`, as in transformers, so a
banned candidate never outranks a live one (beam search's own masks are
-1e9).

`process` applies the controls a `DecodingControls` asks for in
transformers' order (`GenerationMixin._get_logits_processor`): repetition
penalty, n-gram blocking, bad words, minimum length, minimum new tokens,
forced first token, forced last token.
"""

import dataclasses

from keras import ops

NEG_INF = float("-inf")


@dataclasses.dataclass(frozen=True)
class DecodingControls:
    """The controls of one `generate` call (hashable: part of the compiled
    loop's cache key). Zero, 1.0, None and () mean "off", as in
    transformers. Build it with `settings.resolve_generation` (which
    checks every value)."""

    min_length: int = 0
    min_new_tokens: int = 0
    no_repeat_ngram_size: int = 0
    repetition_penalty: float = 1.0
    forced_bos_token_id: int = None
    forced_eos_token_ids: tuple = ()
    bad_words_ids: tuple = ()


def _vocabulary_mask(scores, token_ids):
    """`(vocab,)` bool: True at `token_ids` (a tuple of ints)."""
    vocabulary = ops.arange(ops.shape(scores)[-1], dtype="int32")
    wanted = ops.convert_to_tensor(list(token_ids), dtype="int32")
    return ops.any(ops.equal(ops.expand_dims(vocabulary, -1), wanted),
                   axis=-1)


def _per_row(condition, rows):
    """A scalar or `(rows,)` bool -> `(rows, 1)`."""
    return ops.reshape(ops.broadcast_to(condition, (rows,)), (rows, 1))


def _spare_column_mask(rows_of_ids, keep, vocabulary_size):
    """`(rows, vocab)` bool: True at the ids of `rows_of_ids (rows, k)`
    where `keep (rows, k)`; the others go to a spare column past the
    vocabulary (dropped), as transformers' processors do, so a duplicate
    index can only ever write True."""
    rows, k = ops.shape(rows_of_ids)
    ids = ops.where(keep, ops.minimum(rows_of_ids, vocabulary_size),
                    vocabulary_size)
    row_ids = ops.repeat(ops.expand_dims(ops.arange(rows, dtype="int32"), 1),
                         k, axis=1)
    indices = ops.reshape(ops.stack([row_ids, ops.cast(ids, "int32")], -1),
                          (-1, 2))
    mask = ops.scatter_update(
        ops.zeros((rows, vocabulary_size + 1), dtype="int32"), indices,
        ops.ones((rows * k,), dtype="int32"))
    return ops.greater(mask[:, :vocabulary_size], 0)


def penalise_repetitions(scores, token_ids, index, penalty):
    """CTRL's repetition penalty (`RepetitionPenaltyLogitsProcessor`): a
    token already in the row (prompt included) has its score divided by
    `penalty` when positive, multiplied when negative."""
    length = ops.shape(token_ids)[1]
    seen = ops.broadcast_to(
        ops.expand_dims(ops.less(ops.arange(length), index), 0),
        ops.shape(token_ids))
    present = _spare_column_mask(token_ids, seen, ops.shape(scores)[-1])
    penalised = ops.where(ops.less(scores, 0.0), scores * penalty,
                          scores / penalty)
    return ops.where(present, penalised, scores)


def block_repeated_ngrams(scores, token_ids, index, size):
    """No n-gram of `size` tokens twice in a row
    (`NoRepeatNGramLogitsProcessor`): a token that would complete an
    n-gram already in the row (prompt included) is banned."""
    length = ops.shape(token_ids)[1]
    starts = length - size + 1  # n-gram windows in a full row
    if starts <= 0:
        return scores
    # The row's last `size - 1` tokens (`index - size + 1 ..`), read from
    # clamped positions: before `size - 1` tokens, no window is valid.
    matches = ops.less_equal(ops.arange(starts), index - size)
    matches = ops.expand_dims(matches, 0)
    for j in range(size - 1):
        last = ops.take(token_ids, ops.maximum(index - size + 1 + j, 0),
                        axis=1)
        window = token_ids[:, j:j + starts]
        matches = ops.logical_and(
            matches, ops.equal(window, ops.expand_dims(last, 1)))
    banned = _spare_column_mask(token_ids[:, size - 1:size - 1 + starts],
                                matches, ops.shape(scores)[-1])
    return ops.where(banned, NEG_INF, scores)


def ban_bad_words(scores, token_ids, index, bad_words_ids):
    """Never complete one of `bad_words_ids` (`NoBadWordsLogitsProcessor`):
    a one-token word is banned everywhere; a longer one's last token after
    the rest of it."""
    singles = [w[0] for w in bad_words_ids if len(w) == 1]
    if singles:
        scores = ops.where(ops.expand_dims(
            _vocabulary_mask(scores, singles), 0), NEG_INF, scores)
    rows = ops.shape(scores)[0]
    for word in (w for w in bad_words_ids if len(w) > 1):
        prefix = len(word) - 1
        follows = ops.greater_equal(index, prefix)
        follows = ops.broadcast_to(follows, (rows,))
        for j, token in enumerate(word[:-1]):
            at = ops.take(token_ids, ops.maximum(index - prefix + j, 0),
                          axis=1)
            follows = ops.logical_and(follows, ops.equal(at, token))
        ban = ops.logical_and(
            ops.expand_dims(follows, 1),
            ops.expand_dims(_vocabulary_mask(scores, word[-1:]), 0))
        scores = ops.where(ban, NEG_INF, scores)
    return scores


def hold_back(scores, when, stop_token_ids):
    """No stop token while `when` (`MinLengthLogitsProcessor`,
    `MinNewTokensLengthLogitsProcessor`)."""
    ban = ops.logical_and(
        _per_row(when, ops.shape(scores)[0]),
        ops.expand_dims(_vocabulary_mask(scores, stop_token_ids), 0))
    return ops.where(ban, NEG_INF, scores)


def force(scores, when, token_ids):
    """Only `token_ids` (score 0) while `when` (`ForcedBOSTokenLogitsProcessor`,
    `ForcedEOSTokenLogitsProcessor`)."""
    forced = ops.where(_vocabulary_mask(scores, token_ids), 0.0, NEG_INF)
    return ops.where(_per_row(when, ops.shape(scores)[0]),
                     ops.expand_dims(forced, 0), scores)


def process(controls, scores, token_ids, index, prompt_lengths,
            end_positions, stop_token_ids):
    """`scores` after every control `controls` asks for, in transformers'
    order. `prompt_lengths`, `end_positions`: `(rows,)`; a row's last
    token is the one at `end_positions - 1`."""
    if controls.repetition_penalty != 1.0:
        scores = penalise_repetitions(scores, token_ids, index,
                                      controls.repetition_penalty)
    if controls.no_repeat_ngram_size > 0:
        scores = block_repeated_ngrams(scores, token_ids, index,
                                       controls.no_repeat_ngram_size)
    # transformers leaves the stop tokens alone (a ban on `[eos]` would
    # mean never stopping).
    bad_words = tuple(w for w in controls.bad_words_ids
                      if not (len(w) == 1 and w[0] in stop_token_ids))
    if bad_words:
        scores = ban_bad_words(scores, token_ids, index, bad_words)
    if controls.min_length > 0 and stop_token_ids:
        scores = hold_back(scores, ops.less(index, controls.min_length),
                           stop_token_ids)
    if controls.min_new_tokens > 0 and stop_token_ids:
        scores = hold_back(
            scores, ops.less(index - prompt_lengths, controls.min_new_tokens),
            stop_token_ids)
    if controls.forced_bos_token_id is not None:
        scores = force(scores, ops.equal(index, 1),
                       (controls.forced_bos_token_id,))
    if controls.forced_eos_token_ids:
        scores = force(scores, ops.equal(index, end_positions - 1),
                       controls.forced_eos_token_ids)
    return scores
