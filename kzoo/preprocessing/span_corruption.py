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
original rounds: `tf.round`, half to even, of `float32(length) *
noise_density` computed in float32, so 190 tokens get 29 noise tokens where
float64's `round(190 * 0.15)` gives 28; `noise_counts` gives both numbers),
and the noise and non-noise tokens are each cut into
that many non-empty spans uniformly at random, interleaved starting with
non-noise. `span_corruption_lengths` gives the original's fixed shapes: how
many raw tokens make an input of exactly `inputs_length`, and the target
length that results (512 -> 568 raw tokens, targets of 114).

Family-independent: the sentinel ids are an argument (T5's tokenizer
gives them with `sentinel_id`).

Two implementations of the same rule: the numpy functions below (one
example, a `np.random.Generator`), and `SpanCorrupter`, in TensorFlow ops
for `tf.data` pipelines (pretraining), whose randomness comes from one
`tf.random.Generator` so every pass over a dataset draws fresh spans (see
`kzoo.preprocessing.masking` for why not TensorFlow's stateful ops).
"""

import random

import numpy as np
import tensorflow as tf


def noise_counts(length, noise_density=0.15, mean_noise_span_length=3.0):
    """`(num_noise_tokens, num_noise_spans)` of a `length`-token example,
    as the original's `random_spans_noise_mask` counts them: in float32,
    rounded half to even (`tf.round`), at least one noise and one kept
    token, at least one span (a length under 2 counts as 2).

    Example:
    ```python
    from kzoo.preprocessing.span_corruption import noise_counts
    assert noise_counts(568) == (85, 28)   # T5's 512-token inputs
    # float32(190) * float32(0.15) = 28.500002: 29, where float64's
    # round(190 * 0.15) = round(28.499999999999996) would give 28.
    assert noise_counts(190) == (29, 10)
    ```
    """
    length = max(int(length), 2)
    # float32 products and quotients, as the original's tf ops compute
    # them (`tf.cast(length, tf.float32) * noise_density`): numpy's float32
    # arithmetic rounds each operation the same (IEEE), and np.round, like
    # tf.round, rounds half to even.
    num_noise_tokens = int(np.round(np.float32(length) *
                                    np.float32(noise_density)))
    # At least one noise token and one kept token.
    num_noise_tokens = min(max(num_noise_tokens, 1), length - 1)
    num_noise_spans = max(int(np.round(
        np.float32(num_noise_tokens) / np.float32(mean_noise_span_length))),
        1)
    return num_noise_tokens, num_noise_spans


def random_spans_noise_mask(length, rng, noise_density=0.15,
                            mean_noise_span_length=3.0):
    """A boolean `(length,)` mask, True at noise tokens: the original's
    `random_spans_noise_mask` with `rng` (a `np.random.Generator`) for its
    two random segmentations; the counts are `noise_counts`'."""
    original_length = int(length)
    length = max(original_length, 2)
    num_noise_tokens, num_noise_spans = noise_counts(
        length, noise_density, mean_noise_span_length)
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
    sentinel per span, `</s>`): the original's `random_spans_helper`.

    Like the original's helper, it counts in Python floats (float64),
    while the masks count in float32 (`noise_counts`); at the few lengths
    where the two round apart the masks' targets come out longer than
    `targets_length` says, as the original's do: for `inputs_length` 172,
    316, 352, 604, 640, 676, 712 and 748 (of 2..1024), by 2 tokens (the
    inputs keep their length). T5's 512 is not among them.

    Example:
    ```python
    from kzoo import preprocessing
    # T5: 568 raw tokens become 512 inputs and 114 targets.
    assert preprocessing.span_corruption_lengths(512) == (568, 114)
    ```
    """
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


class SpanCorrupter:
    """Span corruption in TensorFlow ops: token ids -> `(inputs,
    targets)`, each noise span of the input (and each kept span of the
    target) replaced by the next sentinel, as `corrupt_spans` does with a
    `random_spans_noise_mask`. Runs inside `tf.data.Dataset.map`.

    Args:
        sentinel_ids: the sentinels' ids, the first span's first (T5:
            `[tokenizer.sentinel_id(i) for i in range(100)]`).
        noise_density, mean_noise_span_length: as the original (0.15, 3).
        end_token_id: appended to both outputs; None appends nothing
            (`Seq2SeqPreprocessor.pack_ids` appends the end token itself).
        seed: seed of the spans; default: drawn from Python's `random` (so
            `keras.utils.set_random_seed` makes them reproducible).

    Call it on `(length,)` ids (one example) or a `(batch, None)` ragged
    batch; outputs are of the same kind. Give it chunks of at most
    `span_corruption_lengths(inputs_length)[0]` tokens so inputs fit.

    Example:
    ```python
    from kzoo import preprocessing
    # T5's sentinels: [tokenizer.sentinel_id(i) for i in range(100)].
    corrupter = preprocessing.SpanCorrupter(
        sentinel_ids=[1099, 1098, 1097], end_token_id=1, seed=0)
    inputs, targets = corrupter(np.arange(10, 30))   # 20 tokens
    inputs, targets = np.asarray(inputs), np.asarray(targets)
    kept = inputs[(inputs >= 10) & (inputs < 30)]
    dropped = targets[(targets >= 10) & (targets < 30)]
    assert len(dropped) == 3   # 15% of 20
    assert sorted(kept.tolist() + dropped.tolist()) == list(range(10, 30))
    assert inputs[-1] == targets[-1] == 1   # the end token
    ```
    """

    def __init__(self, sentinel_ids, noise_density=0.15,
                 mean_noise_span_length=3.0, end_token_id=None, seed=None):
        if not 0.0 < float(noise_density) < 1.0:
            raise ValueError(f"noise_density must be in (0, 1); got "
                             f"{noise_density!r}.")
        if not float(mean_noise_span_length) >= 1.0:
            raise ValueError(f"mean_noise_span_length must be >= 1; got "
                             f"{mean_noise_span_length!r}.")
        self.sentinel_ids = [int(i) for i in sentinel_ids]
        if not self.sentinel_ids:
            raise ValueError("SpanCorrupter needs at least one sentinel id.")
        self.noise_density = float(noise_density)
        self.mean_noise_span_length = float(mean_noise_span_length)
        self.end_token_id = None if end_token_id is None else int(
            end_token_id)
        if seed is None:
            seed = random.getrandbits(63)
        # On the CPU, where tf.data runs, whatever devices TensorFlow sees.
        with tf.device("/CPU:0"):
            self.generator = tf.random.Generator.from_seed(int(seed))

    def __call__(self, token_ids):
        if isinstance(token_ids, tf.RaggedTensor):
            spec = tf.RaggedTensorSpec([None], token_ids.dtype, 0,
                                       token_ids.row_splits.dtype)
            return tf.map_fn(self.corrupt, token_ids,
                             fn_output_signature=(spec, spec))
        token_ids = tf.convert_to_tensor(token_ids)
        if token_ids.shape.rank == 2:  # a dense batch: rows of one length
            return self(tf.RaggedTensor.from_tensor(token_ids))
        return self.corrupt(token_ids)

    # One example -------------------------------------------------------
    def noise_mask(self, length):
        """`random_spans_noise_mask` for a scalar `length`: a bool
        `(length,)` mask, True at noise tokens."""
        original_length = length
        length = tf.maximum(length, 2)
        # The original's arithmetic: float32, tf.round (half to even). In
        # float64, 190 * 0.15 rounds to 28 noise tokens; the original's
        # float32 product (28.500002) to 29.
        num_noise = tf.cast(tf.round(tf.cast(length, tf.float32) *
                                     self.noise_density), tf.int32)
        num_noise = tf.clip_by_value(num_noise, 1, length - 1)
        num_spans = tf.maximum(tf.cast(tf.round(
            tf.cast(num_noise, tf.float32) / self.mean_noise_span_length),
            tf.int32), 1)
        noise_lengths = self._segmentation(num_noise, num_spans)
        nonnoise_lengths = self._segmentation(length - num_noise, num_spans)
        interleaved = tf.reshape(tf.stack([nonnoise_lengths, noise_lengths],
                                          axis=1), [-1])
        span_starts = tf.cumsum(interleaved)[:-1]
        indicator = tf.scatter_nd(span_starts[:, tf.newaxis],
                                  tf.ones_like(span_starts), [length])
        is_noise = tf.cumsum(indicator) % 2 == 1
        return is_noise[:original_length]

    def _segmentation(self, num_items, num_segments):
        # `num_segments` non-empty segments of `num_items`: a uniformly
        # random choice of which of the `num_items - 1` gaps start one.
        order = tf.argsort(self.generator.uniform([num_items - 1]))
        starts = tf.cast(order < num_segments - 1, tf.int32)
        segment_id = tf.cumsum(tf.concat([[0], starts], axis=0))
        return tf.math.bincount(segment_id, minlength=num_segments,
                                maxlength=num_segments, dtype=tf.int32)

    def corrupt(self, token_ids):
        """One example's `(inputs, targets)`."""
        token_ids = tf.convert_to_tensor(token_ids)
        noise = self.noise_mask(tf.size(token_ids))
        return self._replace(token_ids, noise), \
            self._replace(token_ids, ~noise)

    def _replace(self, token_ids, mask):
        previous = tf.concat([[False], mask[:-1]], axis=0)
        first = mask & ~previous
        span_index = tf.cumsum(tf.cast(first, tf.int32)) - 1
        sentinels = tf.constant(self.sentinel_ids, token_ids.dtype)
        check = tf.debugging.assert_less_equal(
            tf.reduce_sum(tf.cast(first, tf.int32)),
            len(self.sentinel_ids), message=(
                f"more spans than the {len(self.sentinel_ids)} sentinels; "
                "corrupt shorter chunks (span_corruption_lengths)"))
        with tf.control_dependencies([check]):
            out = tf.where(first, tf.gather(sentinels,
                                            tf.maximum(span_index, 0)),
                           token_ids)
        out = tf.boolean_mask(out, ~(mask & previous))
        if self.end_token_id is not None:
            out = tf.concat([out, tf.constant([self.end_token_id],
                                              token_ids.dtype)], axis=0)
        return out
