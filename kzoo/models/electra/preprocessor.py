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
    packing, then ELECTRA's masking, drawn afresh on every call: 15% of
    the tokens selected (never a special token), 85% of those replaced by
    [MASK] and 15% left as they are, no random token (the original's
    `pretrain_helpers.mask`; BERT's split is 80/10/10). Feeds both
    `ElectraMaskedLM` (the generator) and `ElectraPretrainer`.

    Why no random tokens: in ELECTRA the generator's samples are the
    corruption the discriminator learns to spot, so the generator's input
    needs none of its own. How many tokens are selected is kzoo's rule for
    every masked LM (`kzoo.preprocessing.MaskedLMMasker`): ceil(15% of the
    selectable tokens) without repeats, where the original draws
    round(15% of the tokens, [CLS] and [SEP] included) positions with
    replacement. (The original's large model selected 25%:
    `mask_selection_rate=0.25`.)

    x: `token_ids` (masked), `segment_ids`, `padding_mask`,
    `mask_positions`. y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 for empty slots.

    Args: `ElectraPreprocessor`'s and `mask_selection_rate`,
    `mask_selection_length` (see `kzoo.tasks.MaskedLMPreprocessor`),
    `mask_token_rate` (0.85) and `random_token_rate` (0.0); pass 0.8 and
    0.1 for BERT's.

    Example:
    ```python
    preprocessor = kzoo.ElectraMaskedLMPreprocessor.from_preset(
        "electra_small_generator_en_uncased", sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    ```
    """

    def __init__(self, tokenizer, sequence_length=512, truncate="round_robin",
                 mask_selection_rate=0.15, mask_selection_length=None,
                 mask_token_rate=0.85, random_token_rate=0.0, **kwargs):
        super().__init__(tokenizer, sequence_length, truncate,
                         mask_selection_rate=mask_selection_rate,
                         mask_selection_length=mask_selection_length,
                         mask_token_rate=mask_token_rate,
                         random_token_rate=random_token_rate, **kwargs)
