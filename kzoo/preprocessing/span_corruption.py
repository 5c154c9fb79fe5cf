"""T5's span corruption (Raffel et al., 2020, section 3.1.4), as the
original's `t5.data.preprocessors.span_corruption` computes it.

15% of the tokens (`noise_density`) are dropped, in spans of mean length 3
(`mean_noise_span_length`); each dropped span becomes one sentinel in the
input, and the target lists the sentinels, each followed by the span it
replaced:

    tokens:  Thank you for inviting me to your party last week .
    inputs:  Thank you <X> me to your party <Y> week . </s>
    targets: <X> for inviting <Y> last <Z> </s>

Sentinels are used in the original's descending order: the first span gets
`<extra_id_0>` (the last id of the vocabulary), the next `<extra_id_1>`,
... . Span lengths follow the original's `random_spans_noise_mask`: the
number of noise tokens and spans is fixed by the length (rounded as the
original rounds), and the noise and non-noise tokens are each cut into
that many non-empty spans uniformly at random, interleaved starting with
non-noise. `span_corruption_lengths` gives the original's fixed shapes: how
many raw tokens make an input of exactly `inputs_length`, and the target
length that results (512 -> 568 raw tokens, targets of 114).

Family-independent: the sentinel ids are an argument (T5's tokenizer
gives them with `sentinel_id`).
"""

import numpy as np


def random_spans_noise_mask(length, rng, noise_density=0.15,
                            mean_noise_span_length=3.0):
    """A boolean `(length,)` mask, True at noise tokens: the original's
    `random_spans_noise_mask` with `rng` (a `np.random.Generator`) for its
    two random segmentations."""
    original_length = int(length)
    length = max(original_length, 2)
    num_noise_tokens = int(round(length * noise_density))
    # At least one noise token and one kept token.
    num_noise_tokens = min(max(num_noise_tokens, 1), length - 1)
    num_noise_spans = max(int(round(num_noise_tokens /
                                    mean_noise_span_length)), 1)
    num_nonnoise_tokens = length - num_noise_tokens

    def random_segmentation(num_items, num_segments):
        # `num_segments` non-empty segments: choose which of the
        # `num_items - 1` gaps start a new one, uniformly.
        first_in_segment = np.zeros(num_items, "int64")
        starts = rng.permutation(num_items - 1) < num_segments - 1
        first_in_segment[1:] = starts
        segment_id = np.cumsum(first_in_segment)
        return np.bincount(segment_id, minlength=num_segments)

    noise_lengths = random_segmentation(num_noise_tokens, num_noise_spans)
    nonnoise_lengths = random_segmentation(num_nonnoise_tokens,
                                           num_noise_spans)
    interleaved = np.stack([nonnoise_lengths, noise_lengths],
                           axis=1).reshape(-1)
    span_starts = np.cumsum(interleaved)[:-1]
    span_start_indicator = np.zeros(length, "int64")
    span_start_indicator[span_starts] = 1
    span_number = np.cumsum(span_start_indicator)
    return (span_number % 2 == 1)[:original_length]


def span_corruption_lengths(inputs_length, noise_density=0.15,
                            mean_noise_span_length=3.0):
    """`(tokens_length, targets_length)`: the most raw tokens whose
    corrupted input (kept tokens, one sentinel per span, `</s>`) fits in
    `inputs_length`, and the length of their target (noise tokens, one
    sentinel per span, `</s>`): the original's `random_spans_helper`."""
    def lengths(tokens_length):
        num_noise_tokens = int(round(tokens_length * noise_density))
        num_nonnoise_tokens = tokens_length - num_noise_tokens
        num_noise_spans = int(round(num_noise_tokens /
                                    mean_noise_span_length))
        return (num_nonnoise_tokens + num_noise_spans + 1,
                num_noise_tokens + num_noise_spans + 1)

    if int(inputs_length) < 2:
        raise ValueError(f"inputs_length must be at least 2 (a token and "
                         f"</s>); got {inputs_length!r}.")
    tokens_length = int(inputs_length) - 1
    while lengths(tokens_length + 1)[0] <= inputs_length:
        tokens_length += 1
    _, targets_length = lengths(tokens_length)
    if noise_density == 0.5 and targets_length > inputs_length:
        # The original's adjustment, so targets fit the inputs' length.
        tokens_length -= 1
        targets_length -= 1
    return tokens_length, targets_length


def corrupt_spans(token_ids, noise_mask, sentinel_ids, end_token_id):
    """`(inputs, targets)` id arrays of one example: each noise span in
    the input, and each kept span in the target, replaced by the next
    sentinel (`sentinel_ids[0]` first); `end_token_id` ends both."""
    token_ids = np.asarray(token_ids)
    noise_mask = np.asarray(noise_mask, bool)
    if token_ids.shape != noise_mask.shape:
        raise ValueError(f"token_ids {token_ids.shape} and noise_mask "
                         f"{noise_mask.shape} must have one shape.")

    def replace(mask):
        # The first token of each masked span becomes its sentinel; the
        # rest of the span goes.
        previous = np.concatenate([[False], mask[:-1]])
        first = mask & ~previous
        span_index = np.cumsum(first) - 1
        if first.sum() > len(sentinel_ids):
            raise ValueError(
                f"{int(first.sum())} spans but only {len(sentinel_ids)} "
                "sentinels; use shorter examples.")
        sentinels = np.asarray(sentinel_ids)[np.maximum(span_index, 0)]
        out = np.where(first, sentinels, token_ids)
        return np.append(out[~(mask & previous)], end_token_id)

    return replace(noise_mask), replace(~noise_mask)
