"""Masked-LM masking (BERT: select 15%; of those 80% [MASK], 10% random,
10% unchanged), in TensorFlow ops so it runs inside `tf.data`.

Each pass over a dataset draws fresh masks: dynamic masking (RoBERTa).

Why not keras-hub's `MaskedLMMaskGenerator`: its randomness comes from
TensorFlow's stateful random ops (through tf-text). Once a global seed is
set (`keras.utils.set_random_seed`, which most training scripts call),
those ops restart from the same state every time `tf.data` re-creates its
iterator, i.e. every epoch: the "dynamic" masks repeat epoch after epoch.
Here the randomness comes from one `tf.random.Generator`, a variable whose
state carries over between epochs; it is seeded from Python's `random`, so
a seeded program masks reproducibly (given a sequential `map`; with
parallel calls, which batch gets which draws depends on thread timing, as
for any stateful random op in tf.data). The selection rule is
tf-text's (the one keras-hub used): ceil(rate x selectable tokens), capped
at `mask_selection_length`, special tokens never selected.
"""

import math
import random

import tensorflow as tf


class MaskedLMMasker:
    """Masks packed token ids and returns the MLM inputs and targets.

    Args:
        vocabulary_size: random replacements are drawn from [0, size).
        mask_token_id: the id of [MASK].
        unselectable_token_ids: ids never selected (the special tokens).
        sequence_length: used for the default `mask_selection_length`.
        mask_selection_rate: fraction of tokens selected (0.15).
        mask_selection_length: most selections per sequence; defaults to
            ceil(1.25 * rate * sequence_length), room above the mean so the
            cap rarely bites (BERT used 20 for 128 tokens).
        mask_token_rate, random_token_rate: the 80% / 10% split.
        seed: seed of the masks; default: drawn from Python's `random`
            (so `keras.utils.set_random_seed` makes masking reproducible).

    Example:
    ```python
    from kzoo import preprocessing
    tokenizer = kzoo.BertTokenizer.from_preset("bert_tiny_en_uncased")
    packer = kzoo.BertPreprocessor(tokenizer, sequence_length=12)
    token_ids = np.asarray(packer(["The quick brown fox jumped."])
                           ["token_ids"])
    masker = preprocessing.MaskedLMMasker(
        vocabulary_size=tokenizer.vocabulary_size,
        mask_token_id=tokenizer.mask_token_id,
        unselectable_token_ids=tokenizer.special_token_ids,
        sequence_length=12, mask_selection_rate=0.3, seed=0)
    masked, positions, original, weights = (
        np.asarray(t) for t in masker(token_ids))
    # 30% of the 6 text tokens, rounded up ([CLS], [SEP], [PAD] never).
    real = weights[0] > 0
    assert real.sum() == 2
    # The targets are the ids that were at the masked positions.
    assert (token_ids[0, positions[0, real]] == original[0, real]).all()
    ```
    """

    def __init__(self, vocabulary_size, mask_token_id, unselectable_token_ids,
                 sequence_length, mask_selection_rate=0.15,
                 mask_selection_length=None, mask_token_rate=0.8,
                 random_token_rate=0.1, seed=None):
        if not 0.0 <= mask_selection_rate <= 1.0:
            raise ValueError(
                f"mask_selection_rate must be in [0, 1]; got "
                f"{mask_selection_rate}.")
        if mask_token_rate < 0 or random_token_rate < 0 or \
                mask_token_rate + random_token_rate > 1.0:
            raise ValueError(
                "mask_token_rate and random_token_rate must be >= 0 and sum "
                f"to at most 1; got {mask_token_rate} + {random_token_rate}.")
        if mask_selection_length is None:
            mask_selection_length = max(
                1, math.ceil(1.25 * mask_selection_rate * sequence_length))
        self.vocabulary_size = int(vocabulary_size)
        self.mask_token_id = int(mask_token_id)
        self.unselectable_token_ids = sorted({int(i) for i in
                                              unselectable_token_ids})
        self.mask_selection_rate = float(mask_selection_rate)
        self.mask_selection_length = int(mask_selection_length)
        self.mask_token_rate = float(mask_token_rate)
        self.random_token_rate = float(random_token_rate)
        if seed is None:
            seed = random.getrandbits(63)
        # On the CPU, where tf.data runs, whatever devices TensorFlow sees.
        with tf.device("/CPU:0"):
            self.generator = tf.random.Generator.from_seed(int(seed))

    def __call__(self, token_ids):
        """Returns (masked token ids, mask positions, original ids at those
        positions, weights: 1 for a real selection, 0 for padding).

        `token_ids` is `(batch, seq)` (or `(seq,)`); the outputs beyond the
        first are `(batch, mask_selection_length)` (or unbatched).
        """
        token_ids = tf.convert_to_tensor(token_ids)
        if token_ids.shape.rank == 1:
            outputs = self(token_ids[tf.newaxis])
            return tuple(t[0] for t in outputs)
        dtype = token_ids.dtype
        ids = tf.cast(token_ids, tf.int32)
        selectable = self.selectable(ids)
        count = tf.reduce_sum(tf.cast(selectable, tf.float32), axis=1)
        # tf-text's budget: ceil(rate x selectable tokens), at most `slots`.
        budget = tf.minimum(
            tf.cast(tf.math.ceil(count * self.mask_selection_rate), tf.int32),
            self.mask_selection_length)  # (batch,)
        selected, groups = self.select(ids, selectable, budget)
        masked, positions, mask_ids, weights = self._replace(
            ids, selected, groups)
        return (tf.cast(masked, dtype), positions, tf.cast(mask_ids, dtype),
                tf.cast(weights, tf.float32))

    def selectable(self, token_ids):
        """`(batch, seq)` bool: True at the tokens that may be selected
        (the text: every id but `unselectable_token_ids`)."""
        ids = tf.cast(token_ids, tf.int32)
        unselectable = tf.constant(self.unselectable_token_ids, tf.int32)
        return tf.reduce_all(ids[..., tf.newaxis] != unselectable, axis=-1)

    def select(self, ids, selectable, budget):
        """Which positions to mask: `(selected, groups)`, both
        `(batch, seq)`: a bool per position, and for each selected one the
        index of its group, the unit that shares one 80/10/10 decision
        (here the token itself; subclasses may group a span's tokens). At
        most `budget` (`(batch,)`) per row, never an unselectable
        position."""
        # A random order of the selectable positions; the first `budget`.
        scores = tf.where(selectable,
                          self.generator.uniform(tf.shape(ids)), 2.0)
        rank = tf.argsort(tf.argsort(scores, axis=1), axis=1)
        selected = rank < budget[:, tf.newaxis]
        length = tf.shape(ids)[1]
        return selected, tf.broadcast_to(tf.range(length), tf.shape(ids))

    def _replace(self, ids, selected, groups):
        """The fixed-shape outputs from a selection: positions in sequence
        order (padding slots at the end, position 0), the original ids,
        weights, and the ids with 80% [MASK], 10% random, 10% unchanged,
        decided once per group."""
        batch, length = tf.shape(ids)[0], tf.shape(ids)[1]
        slots = self.mask_selection_length
        index = tf.broadcast_to(tf.range(length), tf.shape(ids))
        # Selected positions first, in order; the rest sort after them.
        keys = tf.where(selected, index, length + index)
        keys = tf.pad(keys, [[0, 0], [0, tf.maximum(slots - length, 0)]],
                      constant_values=3 * (length + slots))
        order = tf.sort(keys, axis=1)[:, :slots]
        weights = order < length
        positions = tf.where(weights, order, 0)
        mask_ids = tf.where(weights, tf.gather(ids, positions, batch_dims=1),
                            0)

        # One draw per group: the tokens of a group are treated alike.
        draw = tf.gather(self.generator.uniform(tf.shape(ids)),
                         tf.gather(groups, positions, batch_dims=1),
                         batch_dims=1)  # (batch, slots)
        random_ids = self.generator.uniform(
            (batch, slots), 0, self.vocabulary_size, dtype=tf.int32)
        values = tf.where(
            draw < self.mask_token_rate, self.mask_token_id,
            tf.where(draw < self.mask_token_rate + self.random_token_rate,
                     random_ids, mask_ids))
        rows = tf.broadcast_to(tf.range(batch)[:, tf.newaxis], (batch, slots))
        indices = tf.stack([rows, positions], axis=-1)
        masked = tf.tensor_scatter_nd_update(
            ids, tf.boolean_mask(indices, weights),
            tf.boolean_mask(values, weights))
        return masked, positions, mask_ids, weights
