"""Masked-LM pretraining input for every family that packs as BERT does:
token, whole-word, n-gram or span masking over `SegmentPreprocessor`'s
packing."""

import keras
import tensorflow as tf

from kzoo.core.arguments import OneOf, check_spec
from kzoo.core.text_tensors import as_tf, eager_outputs
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.core.tokenizer import Tokenizer
from kzoo.preprocessing.masking import MaskedLMMasker
from kzoo.preprocessing.word_masking import (NgramMasker, SpanMasker,
                                             WholeWordMasker,
                                             span_boundaries)

# What is masked: single tokens (BERT), whole words (BERT's whole-word
# masking), n-grams of whole words (ALBERT) or spans of whole words
# (SpanBERT).
MASKERS = {"token": MaskedLMMasker, "whole_word": WholeWordMasker,
           "ngram": NgramMasker, "span": SpanMasker}
MASKING_MODES = tuple(MASKERS)
# With masking="span", x also holds each mask slot's span boundaries (the
# positions left and right of its span) and its offset inside the span:
# the inputs of the span boundary objective (kzoo.SpanBoundaryPretrainer).
SPAN_INPUTS = ("span_left", "span_right", "span_relative_positions")


class MaskedLMPreprocessor(SegmentPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights.

    x: `token_ids` (masked), `segment_ids`, `padding_mask`, `mask_positions`
    (and with `masking="span"`: `span_left`, `span_right`,
    `span_relative_positions`, see `SPAN_INPUTS`).
    y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Masking is dynamic in every mode: each call (each pass of `fit` over the
    data) draws fresh masks, also under `keras.utils.set_random_seed` (see
    `kzoo.preprocessing.MaskedLMMasker`).

    Args (beyond `SegmentPreprocessor`'s):
        masking: `"token"` (BERT: tokens chosen one by one), `"whole_word"`
            (every piece of a chosen word, as BERT's whole-word-masking
            checkpoints), `"ngram"` (ALBERT: n-grams of 1-3 whole words,
            p(n) proportional to 1/n) or `"span"` (SpanBERT: spans of whole
            words, their lengths geometric with p = 0.2, at most 10 words).
            The 15% is counted in tokens in every mode; see
            `kzoo.preprocessing.word_masking`. Default (None): the family's
            `default_masking` ("token"; ALBERT's "ngram").
        mask_selection_rate: share of tokens selected (0.15).
        mask_selection_length: most masks per sequence (default: see
            `kzoo.preprocessing.MaskedLMMasker`).
        mask_token_rate, random_token_rate: 0.8 and 0.1, BERT's split,
            decided per token in every mode but `"span"`, where each
            merged span takes one decision (as each original does).

    A family's masked-LM preprocessor mixes its own packing in first:
    `class BertMaskedLMPreprocessor(BertPreprocessor, MaskedLMPreprocessor)`.

    Example:
    ```python
    preprocessor = kzoo.BertMaskedLMPreprocessor.from_preset(
        "bert_tiny_en_uncased", sequence_length=32, masking="whole_word")
    assert isinstance(preprocessor, kzoo.tasks.MaskedLMPreprocessor)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    ```
    """

    draws_per_call = True  # fresh masks on every call
    # The masked tokens are the labels: labels given to `fit` would be
    # dropped without a word, so they are refused.
    takes_labels = False
    # The masking a family's original pretrained with (`masking=None`).
    default_masking = "token"

    argument_spec = {"masking": OneOf(MASKING_MODES, noun="masking mode")}

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin",
                 mask_selection_rate=0.15, mask_selection_length=None,
                 mask_token_rate=0.8, random_token_rate=0.1, masking=None,
                 **kwargs):
        if masking is None:
            masking = type(self).default_masking
        check_spec(type(self), {"masking": masking})
        super().__init__(tokenizer, sequence_length, truncate, **kwargs)
        if masking != "token" and type(tokenizer).word_start_table is \
                Tokenizer.word_start_table:
            raise ValueError(
                f"{type(self).__name__}: masking={masking!r} needs to know "
                f"where words begin, and {type(tokenizer).__name__} has no "
                'word_start_table(). Use masking="token".')
        self.masking = masking
        self.mask_selection_rate = float(mask_selection_rate)
        self.mask_token_rate = float(mask_token_rate)
        self.random_token_rate = float(random_token_rate)
        # The masker that masks needs the vocabulary, so setup() makes it.
        # This one, with stand-in ids and a fixed seed (no draw from the
        # global random state), checks the rates now and resolves the
        # default mask_selection_length, which the config and the task's
        # output shape need before first use.
        self.mask_selection_length = MaskedLMMasker(
            vocabulary_size=1, mask_token_id=0, unselectable_token_ids=(),
            mask_selection_length=mask_selection_length, seed=0,
            **self._masker_arguments()).mask_selection_length

    def _masker_arguments(self):
        return {"sequence_length": self.sequence_length,
                "mask_selection_rate": self.mask_selection_rate,
                "mask_token_rate": self.mask_token_rate,
                "random_token_rate": self.random_token_rate}

    def setup(self):
        super().setup()
        tokenizer = self.tokenizer
        words = {} if self.masking == "token" else {
            "word_starts": tokenizer.word_start_table()}
        self.masker = MASKERS[self.masking](
            vocabulary_size=tokenizer.vocabulary_size,
            mask_token_id=tokenizer.mask_token_id,
            unselectable_token_ids=tokenizer.special_token_ids,
            mask_selection_length=self.mask_selection_length,
            **self._masker_arguments(), **words)

    def mask(self, x):
        """Mask a packed input dict; returns (x, mask_ids, mask_weights)
        (backend tensors when called eagerly, as `__call__`)."""
        return eager_outputs(self._mask(x))

    def _mask(self, x):
        self._ensure_setup()
        original = as_tf(x["token_ids"])
        token_ids, positions, mask_ids, weights = self.masker(original)
        x = {**x, "token_ids": token_ids, "mask_positions": positions}
        if self.masking == "span":
            x.update(self._span_inputs(positions, weights,
                                       self.masker.selectable(original)))
        return x, mask_ids, weights

    @staticmethod
    def _span_inputs(positions, weights, text):
        # Boundaries only on text: SpanBERT scores no span next to [CLS]
        # or [SEP] (see span_boundaries).
        unbatched = positions.shape.rank == 1
        if unbatched:
            positions, weights, text = (t[tf.newaxis] for t in
                                        (positions, weights, text))
        outputs = span_boundaries(positions, weights, tf.shape(text)[-1],
                                  text=text)
        if unbatched:
            outputs = [t[0] for t in outputs]
        return dict(zip(SPAN_INPUTS, outputs))

    def call(self, x, y=None, sample_weight=None):
        prepared = self.prepare(x, y, sample_weight)
        return self.draw(*(prepared if isinstance(prepared, tuple)
                           else (prepared,)))

    def prepare(self, x, y=None, sample_weight=None):
        # Tokenized and packed once; masked per batch (`draw`).
        return keras.utils.pack_x_y_sample_weight(self._pack(x), y,
                                                  sample_weight)

    def draw(self, x, y=None, sample_weight=None):
        x, mask_ids, weights = self._mask(x)
        return keras.utils.pack_x_y_sample_weight(x, mask_ids, weights)

    def get_config(self):
        config = super().get_config()
        config.update({
            "mask_selection_rate": self.mask_selection_rate,
            "mask_selection_length": self.mask_selection_length,
            "mask_token_rate": self.mask_token_rate,
            "random_token_rate": self.random_token_rate,
            "masking": self.masking,
        })
        return config
