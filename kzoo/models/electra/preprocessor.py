"""ELECTRA's input packing and masking: BERT's, with ELECTRA's tokenizer."""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.models.electra.tokenizer import ElectraTokenizer
from kzoo.core.registry import register


@register
class ElectraPreprocessor(SegmentPreprocessor):
    """Raw text (or a tuple of two lists for pairs) -> `token_ids`,
    `segment_ids`, `padding_mask`, packed as BERT's: `[CLS] A [SEP]` and
    `[CLS] A [SEP] B [SEP]`.

    Args: as `kzoo.tasks.SegmentPreprocessor`'s (`tokenizer`: an
    `ElectraTokenizer`).

    Example:
    ```python
    preprocessor = kzoo.ElectraPreprocessor.from_preset(
        "electra_small_discriminator_en_uncased", sequence_length=16)
    preprocessor(["The quick brown fox."])
    ```
    """

    tokenizer_cls = ElectraTokenizer


@register
class ElectraMaskedLMPreprocessor(ElectraPreprocessor,
                                  MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights: ELECTRA's
    packing, then BERT's masking (15% selected; 80% [MASK], 10% random, 10%
    kept; never a special token), drawn afresh on every call. Feeds both
    `ElectraMaskedLM` (the generator) and `ElectraPretrainer`.

    x: `token_ids` (masked), `segment_ids`, `padding_mask`,
    `mask_positions`. y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 for empty slots.

    Args: `ElectraPreprocessor`'s and `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    preprocessor = kzoo.ElectraMaskedLMPreprocessor.from_preset(
        "electra_small_generator_en_uncased", sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    ```
    """
