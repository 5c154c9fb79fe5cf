"""Masked-LM masking (BERT: select 15%; of those 80% [MASK], 10% random,
10% unchanged), through keras-hub's `MaskedLMMaskGenerator`.

It runs inside `tf.data`, so each epoch draws fresh masks: dynamic masking
(RoBERTa) comes for free once the dataset is re-iterated.
"""

import math

import keras_hub


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
    """

    def __init__(self, vocabulary_size, mask_token_id, unselectable_token_ids,
                 sequence_length, mask_selection_rate=0.15,
                 mask_selection_length=None, mask_token_rate=0.8,
                 random_token_rate=0.1):
        if mask_selection_length is None:
            mask_selection_length = max(
                1, math.ceil(1.25 * mask_selection_rate * sequence_length))
        self.mask_selection_length = int(mask_selection_length)
        self.generator = keras_hub.layers.MaskedLMMaskGenerator(
            vocabulary_size=vocabulary_size,
            mask_selection_rate=mask_selection_rate,
            mask_token_id=mask_token_id,
            mask_selection_length=self.mask_selection_length,
            unselectable_token_ids=list(unselectable_token_ids),
            mask_token_rate=mask_token_rate,
            random_token_rate=random_token_rate,
        )

    def __call__(self, token_ids):
        """Returns (masked token ids, mask positions, original ids at those
        positions, weights: 1 for a real selection, 0 for padding)."""
        masked = self.generator(token_ids)
        return (masked["token_ids"], masked["mask_positions"],
                masked["mask_ids"], masked["mask_weights"])
