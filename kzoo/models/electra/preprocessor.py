"""ELECTRA's input packing and masking: BERT's, with ELECTRA's tokenizer."""

from kzoo.models.bert.masked_lm_preprocessor import BertMaskedLMPreprocessor
from kzoo.models.bert.preprocessor import BertPreprocessor
from kzoo.models.electra.tokenizer import ElectraTokenizer
from kzoo.models.registry import register


@register
class ElectraPreprocessor(BertPreprocessor):
    """Raw text (or a tuple of two lists for pairs) -> `token_ids`,
    `segment_ids`, `padding_mask`, packed as BERT's: `[CLS] A [SEP]` and
    `[CLS] A [SEP] B [SEP]`.

    Args: as `kzoo.BertPreprocessor`'s (`tokenizer`: an
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
                                  BertMaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights: ELECTRA's
    packing, then BERT's masking (15% selected; 80% [MASK], 10% random, 10%
    kept; never a special token), drawn afresh on every call. Feeds both
    `ElectraMaskedLM` (the generator) and `ElectraPretrainer`.

    x: `token_ids` (masked), `segment_ids`, `padding_mask`,
    `mask_positions`. y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 for empty slots.

    Args: `ElectraPreprocessor`'s and `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.BertMaskedLMPreprocessor`).

    Example:
    ```python
    preprocessor = kzoo.ElectraMaskedLMPreprocessor.from_preset(
        "electra_small_generator_en_uncased", sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    ```
    """
