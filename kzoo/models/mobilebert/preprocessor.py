"""MobileBERT's input packing and masking: BERT's, with MobileBERT's
tokenizer."""

from kzoo.core.registry import register
from kzoo.models.mobilebert.tokenizer import MobileBertTokenizer
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor


@register
class MobileBertPreprocessor(SegmentPreprocessor):
    """Raw text (or a tuple of two lists for pairs) -> `token_ids`,
    `segment_ids`, `padding_mask`, packed as BERT's: `[CLS] A [SEP]` and
    `[CLS] A [SEP] B [SEP]`.

    Args: as `kzoo.tasks.SegmentPreprocessor`'s (`tokenizer`: a
    `MobileBertTokenizer`).

    Example:
    ```python
    # Setup: the example of kzoo.MobileBertTokenizer (tokenizer).
    preprocessor = kzoo.MobileBertPreprocessor(tokenizer, sequence_length=16)
    preprocessor(["The quick brown fox."])
    ```
    """

    tokenizer_cls = MobileBertTokenizer


@register
class MobileBertMaskedLMPreprocessor(MobileBertPreprocessor,
                                     MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights: MobileBERT's
    packing, then BERT's masking (15% selected, 80% `[MASK]`, 10% random,
    10% kept; never a special token), drawn afresh on every call.

    x: `token_ids` (masked), `segment_ids`, `padding_mask`,
    `mask_positions`. y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 for empty slots.

    Args: `MobileBertPreprocessor`'s and `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    # Setup: the example of kzoo.MobileBertTokenizer (tokenizer).
    preprocessor = kzoo.MobileBertMaskedLMPreprocessor(tokenizer,
                                                       sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    ```
    """
