"""RemBERT's input packing: BERT's ([CLS] a [SEP] (b [SEP]), segment ids)
with RemBERT's SentencePiece tokenizer."""

from kzoo.core.registry import register
from kzoo.models.rembert.tokenizer import RemBertTokenizer
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor


@register
class RemBertPreprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `segment_ids`, `padding_mask`, packed
    as Hugging Face's `RemBertTokenizer` packs: `[CLS] A [SEP]` and
    `[CLS] A [SEP] B [SEP]`, segment ids 0 then 1, padded with `<pad>`.

    Args:
        tokenizer: a `RemBertTokenizer`.
        sequence_length, truncate: as `kzoo.tasks.SegmentPreprocessor`'s.

    Example:
    ```python
    # Setup: the example of kzoo.RemBertTokenizer (tokenizer).
    preprocessor = kzoo.RemBertPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    ids = np.asarray(x["token_ids"][0]).tolist()   # [CLS] A [SEP] B [SEP]
    assert ids[0] == tokenizer.cls_token_id
    assert ids.count(tokenizer.sep_token_id) == 2
    ```
    """

    tokenizer_cls = RemBertTokenizer


@register
class RemBertMaskedLMPreprocessor(RemBertPreprocessor, MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    RemBERT's masked LM: RemBERT's packing, then BERT's masking (15% of
    the pieces, 80% `[MASK]`, 10% random, 10% kept; never a special
    token). Outputs, masking modes and rates: see
    `kzoo.tasks.MaskedLMPreprocessor`.

    Example:
    ```python
    # Setup: the example of kzoo.RemBertTokenizer (tokenizer).
    preprocessor = kzoo.RemBertMaskedLMPreprocessor(tokenizer,
                                                    sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    ```
    """
