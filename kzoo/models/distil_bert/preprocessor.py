"""DistilBERT's input packing: [CLS] a [SEP] (b [SEP]), no segment ids."""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.models.distil_bert.tokenizer import DistilBertTokenizer
from kzoo.core.registry import register


@register
class DistilBertPreprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `padding_mask`, packed as BERT's:
    `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, padded with `[PAD]`.

    DistilBERT has no token types, so there are no segment ids: a pair is
    told apart by its `[SEP]` alone.

    Args:
        tokenizer: a `DistilBertTokenizer`.
        sequence_length: packed length; longer inputs are truncated. At
            least 2 ([CLS], [SEP]); 3 for pairs.
        truncate: `"round_robin"` or `"waterfall"` (see
            `kzoo.tasks.SegmentPreprocessor`).

    Example:
    ```python
    preprocessor = kzoo.DistilBertPreprocessor.from_preset(
        "distil_bert_base", sequence_length=16)
    preprocessor(["The quick brown fox."])
    preprocessor((["The fox."], ["It jumped."]))
    ```
    """

    tokenizer_cls = DistilBertTokenizer
    segment_input = False  # no token types: no segment input


@register
class DistilBertMaskedLMPreprocessor(DistilBertPreprocessor,
                                     MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    DistilBERT's masked LM (and distillation): DistilBERT's packing, then
    BERT's masking (15% selected, 80% `[MASK]`, 10% random, 10% kept;
    never a special token), drawn afresh on every call, as DistilBERT was
    trained (dynamic masking, after RoBERTa).

    x: `token_ids` (masked), `padding_mask`, `mask_positions`.
    y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Args: `DistilBertPreprocessor`'s, and `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    preprocessor = kzoo.DistilBertMaskedLMPreprocessor.from_preset(
        "distil_bert_base", sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    ```
    """
