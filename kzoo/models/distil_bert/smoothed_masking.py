"""DistilBERT's masking: tokens chosen for the masked-LM loss with
probability proportional to `count ** -mlm_smoothing`, rare tokens more
often (XLM's smoothing, which DistilBERT's recipe took over).

As Hugging Face's `examples/research_projects/distillation` does it:
`train.py` turns the corpus' token counts (`scripts/token_counts.py`: every
id of the tokenized corpus, special tokens included) into

    token_probs = np.maximum(counts, 1) ** -mlm_smoothing   # 0.7
    token_probs[special_ids] = 0

and `Distiller.prepare_batch_mlm` picks, over the whole batch at once,
`ceil(mlm_mask_prop * lengths.sum())` positions (15% of the batch's real
tokens, [CLS] and [SEP] counted) without replacement, each with
probability proportional to its token's `token_probs`
(`torch.multinomial(..., replacement=False)`); each picked token becomes
[MASK] (80%), a uniformly random id (10%) or stays (10%).

Here the same in TensorFlow ops, so it runs in `tf.data` with fresh masks
every batch (`kzoo.preprocessing.MaskedLMMasker`'s randomness): the
weighted draw without replacement is an exponential race (each position's
key `Exp(1) / weight`, the smallest keys win), which picks sets with the
same probabilities as `torch.multinomial`'s successive draws. Because the
batch shares one budget, a row may hold more masks than a per-row budget
would give it: every position of a row has a slot
(`mask_selection_length` = `sequence_length`).

`kzoo.Distiller(mlm_smoothing=0.7)` uses it; `SmoothedMaskingPreprocessor`
puts it behind a student's masked-LM preprocessor.
"""

import keras
import numpy as np
import tensorflow as tf

from kzoo.core.preprocessor import Preprocessor
from kzoo.preprocessing.masking import MaskedLMMasker


def token_probabilities(counts, mlm_smoothing=0.7, special_token_ids=()):
    """The recipe's masking weight of each token id: `max(count, 1) **
    -mlm_smoothing`, 0 for the special tokens (never masked). Unnormalised,
    as the original keeps them (the draw normalises over each batch).

    Args:
        counts: one count per token id (the vocabulary's size), how often
            each id occurs in the training corpus.
        mlm_smoothing: the exponent (0.7 in the recipe; 0: every token
            alike).
        special_token_ids: ids whose weight is 0.

    Example:
    ```python
    from kzoo.models.distil_bert.smoothed_masking import token_probabilities
    weights = token_probabilities([5, 0, 1, 100], 0.7, special_token_ids=[0])
    # An unseen token counts as seen once; 100 ** -0.7 = 10 ** -1.4.
    np.testing.assert_allclose(weights, [0.0, 1.0, 1.0, 0.0398107])
    ```
    """
    counts = np.asarray(counts, dtype="float64")
    if counts.ndim != 1 or not counts.size:
        raise ValueError(
            "token counts must be one count per token id (a 1-D array of "
            f"the vocabulary's size); got shape {counts.shape}.")
    if not np.all(np.isfinite(counts)) or (counts < 0).any():
        raise ValueError("token counts must be finite and >= 0 (how often "
                         "each id occurs in the corpus).")
    if isinstance(mlm_smoothing, bool) or not isinstance(
            mlm_smoothing, (int, float)) or not mlm_smoothing >= 0:
        raise ValueError(f"mlm_smoothing must be a number >= 0; got "
                         f"{mlm_smoothing!r}.")
    weights = np.maximum(counts, 1) ** -float(mlm_smoothing)
    special = [int(i) for i in special_token_ids]
    weights[special] = 0.0  # never predict a special token
    return weights


def count_tokens(texts, tokenizer, chunk_size=1024):
    """How often each token id occurs in `texts` (a `(vocabulary_size,)`
    int64 array): the counts the recipe's smoothing reads
    (`scripts/token_counts.py` counts its tokenized corpus the same way;
    the special tokens it also counts get weight 0 anyway).

    Args:
        texts: strings (a list, an array, a tuple of such lists for text
            pairs), or a finite `tf.data.Dataset` of strings (batched or
            not).
        tokenizer: the tokenizer of the models being distilled.
    """
    counts = np.zeros(int(tokenizer.vocabulary_size), "int64")

    def add(batch):
        ids = tokenizer.tokenize_tf(tf.reshape(
            tf.convert_to_tensor(batch, tf.string), [-1]))
        ids = ids.flat_values if isinstance(ids, tf.RaggedTensor) else ids
        ids = np.asarray(ids, "int64").reshape(-1)
        if ids.size:
            counts[:] += np.bincount(ids, minlength=counts.size)[
                :counts.size]

    if isinstance(texts, tf.data.Dataset):
        if texts.cardinality() == tf.data.INFINITE_CARDINALITY:
            raise ValueError(
                "count_tokens: the dataset is infinite (repeated); count "
                "the texts of one pass.")
        for batch in texts.as_numpy_iterator():
            add(batch)
        return counts
    parts = texts if isinstance(texts, tuple) else (texts,)
    for part in parts:
        part = [part] if isinstance(part, (str, bytes)) else list(part)
        for start in range(0, len(part), chunk_size):
            add(part[start:start + chunk_size])
    return counts


class SmoothedMasker(MaskedLMMasker):
    """Masks packed token ids as DistilBERT's recipe does (see the module
    doc): over the whole batch, `ceil(mask_selection_rate * real tokens)`
    positions without replacement, each with probability proportional to
    its token's weight; then 80% [MASK], 10% random, 10% unchanged.

    Args:
        token_probabilities: one weight per token id
            (`token_probabilities(...)`); 0 never selects the token.
        mask_token_id: the id of [MASK].
        sequence_length: the rows' length; every position has a slot.
        mask_selection_rate, mask_token_rate, random_token_rate: 15%, 80%,
            10% (the recipe's `mlm_mask_prop`, `word_mask`, `word_rand`).
        seed: seed of the masks (default: from Python's `random`).

    Call it on `(batch, seq)` token ids and their padding mask; it returns
    `MaskedLMMasker`'s outputs, `(batch, sequence_length)` after the first.
    """

    def __init__(self, token_probabilities, mask_token_id, sequence_length,
                 mask_selection_rate=0.15, mask_token_rate=0.8,
                 random_token_rate=0.1, seed=None):
        weights = np.asarray(token_probabilities, "float32")
        super().__init__(
            vocabulary_size=weights.size, mask_token_id=mask_token_id,
            unselectable_token_ids=np.flatnonzero(weights == 0),
            sequence_length=sequence_length,
            mask_selection_rate=mask_selection_rate,
            mask_selection_length=sequence_length,
            mask_token_rate=mask_token_rate,
            random_token_rate=random_token_rate, seed=seed)
        # A variable, so that new counts reach graphs already traced.
        with tf.init_scope(), tf.device("/CPU:0"):
            self.token_probabilities = tf.Variable(
                weights, trainable=False, name="token_probabilities")

    def set_token_probabilities(self, token_probabilities):
        weights = np.asarray(token_probabilities, "float32")
        if weights.shape != tuple(self.token_probabilities.shape):
            raise ValueError(
                f"{weights.size} token weights for a vocabulary of "
                f"{self.token_probabilities.shape[0]}.")
        self.token_probabilities.assign(weights)

    def __call__(self, token_ids, padding_mask=None):
        token_ids = tf.convert_to_tensor(token_ids)
        if token_ids.shape.rank == 1:
            outputs = self(token_ids[tf.newaxis], None if padding_mask is None
                           else tf.convert_to_tensor(padding_mask)[tf.newaxis])
            return tuple(t[0] for t in outputs)
        dtype = token_ids.dtype
        ids = tf.cast(token_ids, tf.int32)
        real = tf.ones_like(ids, tf.bool) if padding_mask is None else \
            tf.cast(padding_mask, tf.bool)
        weights = tf.where(real, tf.gather(self.token_probabilities, ids),
                           0.0)  # (batch, seq)
        # The batch's budget: ceil(rate x its real tokens, special ones
        # included), in float64 as the original's Python float; at most
        # the positions that can be drawn (torch.multinomial would refuse
        # more).
        budget = tf.cast(tf.math.ceil(
            tf.cast(tf.reduce_sum(tf.cast(real, tf.int32)), tf.float64) *
            self.mask_selection_rate), tf.int32)
        budget = tf.minimum(budget,
                            tf.reduce_sum(tf.cast(weights > 0, tf.int32)))
        # Weighted draws without replacement, all at once: with E ~ Exp(1)
        # per position, the order of E / weight is the order of successive
        # weighted draws (the first is i with probability w_i / sum(w), and
        # so on, by memorylessness). A weight of 0 never comes up.
        exponential = -tf.math.log1p(-self.generator.uniform(tf.shape(ids)))
        keys = tf.where(weights > 0,
                        exponential / tf.maximum(weights, 1e-30), np.inf)
        flat = tf.reshape(keys, [-1])
        rank = tf.argsort(tf.argsort(flat))
        selected = tf.reshape(rank < budget, tf.shape(ids))
        groups = tf.broadcast_to(tf.range(tf.shape(ids)[1]), tf.shape(ids))
        masked, positions, mask_ids, slot_weights = self._replace(
            ids, selected, groups)
        return (tf.cast(masked, dtype), positions, tf.cast(mask_ids, dtype),
                tf.cast(slot_weights, tf.float32))


class SmoothedMaskingPreprocessor(Preprocessor):
    """A masked-LM preprocessor's packing with DistilBERT's smoothed
    masking (`SmoothedMasker`) in place of its own: raw text ->
    `(x, y, sample_weight)` in the masked-LM layout (`mask_positions`, the
    original ids, weights), `sequence_length` slots per row.

    The `kzoo.Distiller` makes one around its student's preprocessor when
    `mlm_smoothing` is set; the masking rates are that preprocessor's.

    Args:
        preprocessor: a `kzoo.tasks.MaskedLMPreprocessor` (token masking).
        mlm_smoothing: the exponent of the token weights.
        token_counts: one count per token id, or None until
            `set_token_counts` gives them (drawing masks needs them).
        seed: seed of the masks.
    """

    draws_per_call = True

    def __init__(self, preprocessor, mlm_smoothing=0.7, token_counts=None,
                 seed=None, **kwargs):
        super().__init__(preprocessor.tokenizer, preprocessor.sequence_length,
                         **kwargs)
        self.preprocessor = preprocessor
        # The student's preprocessor decides what text it takes.
        self.min_segments = preprocessor.min_segments
        self.max_segments = preprocessor.max_segments
        self.segments_hint = preprocessor.segments_hint
        self.mlm_smoothing = float(mlm_smoothing)
        self.seed = seed
        self.token_counts = None
        self._weights = None
        if token_counts is not None:
            self.set_token_counts(token_counts)

    def special_token_count(self, num_segments):
        return self.preprocessor.special_token_count(num_segments)

    def set_token_counts(self, token_counts):
        """The corpus' token counts (one per id), which the masks' weights
        come from: `token_probabilities(counts, mlm_smoothing)`, the
        tokenizer's special tokens at 0."""
        counts = np.asarray(token_counts)
        size = int(self.tokenizer.vocabulary_size)
        if counts.shape != (size,):
            raise ValueError(
                f"token_counts must hold one count per token id: shape "
                f"({size},) for {type(self.tokenizer).__name__}'s "
                f"vocabulary; got shape {counts.shape}.")
        weights = token_probabilities(
            counts, self.mlm_smoothing, self.tokenizer.special_token_ids)
        self.token_counts = counts
        self._weights = weights
        if self._set_up:
            self.masker.set_token_probabilities(weights)

    def setup(self):
        self.preprocessor._ensure_setup()
        source = self.preprocessor
        # Until the counts come, every token alike (never drawn: `draw`
        # refuses to mask without counts).
        weights = self._weights if self._weights is not None else \
            token_probabilities(np.ones(self.tokenizer.vocabulary_size),
                                self.mlm_smoothing,
                                self.tokenizer.special_token_ids)
        self.masker = SmoothedMasker(
            weights, mask_token_id=self.tokenizer.mask_token_id,
            sequence_length=self.sequence_length,
            mask_selection_rate=source.mask_selection_rate,
            mask_token_rate=source.mask_token_rate,
            random_token_rate=source.random_token_rate, seed=self.seed)

    def prepare(self, x, y=None, sample_weight=None):
        # Tokenized and packed once, by the student's preprocessor.
        return self.preprocessor.prepare(x, y, sample_weight)

    def draw(self, x, y=None, sample_weight=None):
        self._ensure_setup()
        if self.token_counts is None:
            raise ValueError(
                "Smoothed masking (mlm_smoothing) weighs each token by its "
                "count in the training corpus, and none were given: pass "
                "token_counts=kzoo.models.distil_bert.smoothed_masking."
                "count_tokens(texts, tokenizer) (or the Distiller's "
                "count_tokens), fit on in-memory texts (counted then), or "
                "mlm_smoothing=None for the student's own masking.")
        token_ids, positions, mask_ids, weights = self.masker(
            x["token_ids"], x["padding_mask"])
        x = {**x, "token_ids": token_ids, "mask_positions": positions}
        return keras.utils.pack_x_y_sample_weight(x, mask_ids, weights)

    def call(self, x, y=None, sample_weight=None):
        return self.draw(self.prepare(x))

    def get_config(self):
        raise NotImplementedError(
            "A SmoothedMaskingPreprocessor belongs to a Distiller, which is "
            "not saved: save the student (distiller.student).")

