"""Preprocessing for BERT's masked-LM pretraining."""

import keras

from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models.registry import register
from kzoo.models.text_tensors import as_tf, eager_outputs
from kzoo.preprocessing.masking import MaskedLMMasker


@register
class BertMaskedLMPreprocessor(BertPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights.

    x: `token_ids` (masked), `segment_ids`, `padding_mask`, `mask_positions`.
    y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Args (beyond `BertPreprocessor`'s):
        mask_selection_rate: share of tokens selected (0.15).
        mask_selection_length: most masks per sequence (default: see
            `kzoo.preprocessing.MaskedLMMasker`).
        mask_token_rate, random_token_rate: 0.8 and 0.1, BERT's split.
    """

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin",
                 mask_selection_rate=0.15, mask_selection_length=None,
                 mask_token_rate=0.8, random_token_rate=0.1, **kwargs):
        super().__init__(tokenizer, sequence_length, truncate, **kwargs)
        self.mask_selection_rate = float(mask_selection_rate)
        self.mask_token_rate = float(mask_token_rate)
        self.random_token_rate = float(random_token_rate)
        # The masker that masks needs the vocabulary, so setup() makes it.
        # This one, with stand-in ids and a fixed seed (no draw from the
        # global random state), checks the rates now and resolves the
        # default mask_selection_length, which the config and the task's
        # output shape need before first use.
        self.mask_selection_length = self._masker(
            vocabulary_size=1, mask_token_id=0, unselectable_token_ids=(),
            mask_selection_length=mask_selection_length,
            seed=0).mask_selection_length

    def _masker(self, **kwargs):
        return MaskedLMMasker(
            sequence_length=self.sequence_length,
            mask_selection_rate=self.mask_selection_rate,
            mask_token_rate=self.mask_token_rate,
            random_token_rate=self.random_token_rate, **kwargs)

    def setup(self):
        super().setup()
        tokenizer = self.tokenizer
        self.masker = self._masker(
            vocabulary_size=tokenizer.vocabulary_size,
            mask_token_id=tokenizer.mask_token_id,
            unselectable_token_ids=tokenizer.special_token_ids,
            mask_selection_length=self.mask_selection_length)

    def mask(self, x):
        """Mask a packed input dict; returns (x, mask_ids, mask_weights)
        (backend tensors when called eagerly, as `__call__`)."""
        return eager_outputs(self._mask(x))

    def _mask(self, x):
        self._ensure_setup()
        token_ids, positions, mask_ids, weights = self.masker(
            as_tf(x["token_ids"]))
        x = {**x, "token_ids": token_ids, "mask_positions": positions}
        return x, mask_ids, weights

    def call(self, x, y=None, sample_weight=None):
        x, mask_ids, weights = self._mask(self._pack(x))
        return keras.utils.pack_x_y_sample_weight(x, mask_ids, weights)

    def get_config(self):
        config = super().get_config()
        config.update({
            "mask_selection_rate": self.mask_selection_rate,
            "mask_selection_length": self.mask_selection_length,
            "mask_token_rate": self.mask_token_rate,
            "random_token_rate": self.random_token_rate,
        })
        return config
