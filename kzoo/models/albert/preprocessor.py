"""ALBERT's input packing: BERT's ([CLS] a [SEP] (b [SEP]), segment ids)
with ALBERT's SentencePiece tokenizer."""

from kzoo.models.albert.tokenizer import AlbertTokenizer
from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.core.registry import register


@register
class AlbertPreprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `segment_ids`, `padding_mask`, packed
    as the original: `[CLS] A [SEP]` and `[CLS] A [SEP] B [SEP]`, segment
    ids 0 then 1, padded with `<pad>`.

    Args:
        tokenizer: an `AlbertTokenizer`.
        sequence_length, truncate: as `kzoo.tasks.SegmentPreprocessor`'s.

    Example:
    ```python
    from kzoo import datasets
    # albert_base_en_uncased's spiece.model comes with its weights
    # (downloaded once). Offline: a small one in ALBERT's layout.
    tokenizer = kzoo.AlbertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    preprocessor = kzoo.AlbertPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    ids = np.asarray(x["token_ids"][0]).tolist()   # [CLS] A [SEP] B [SEP]
    assert ids[0] == tokenizer.cls_token_id
    assert ids.count(tokenizer.sep_token_id) == 2
    ```
    """

    tokenizer_cls = AlbertTokenizer


@register
class AlbertMaskedLMPreprocessor(AlbertPreprocessor,
                                 MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights, for
    ALBERT's masked LM: ALBERT's packing, then ALBERT's n-gram masking
    (the paper's section 4.1 and its `create_pretraining_data.py`): 15% of
    the pieces selected in n-grams of n = 1..3 whole words, p(n)
    proportional to 1/n (`kzoo.preprocessing.NgramMasker`); each piece
    80% `[MASK]`, 10% random, 10% kept; never a special token. Words are
    the original's (`AlbertTokenizer.word_start_table`).

    x: `token_ids` (masked), `segment_ids`, `padding_mask`,
    `mask_positions`. y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Args: `AlbertPreprocessor`'s, and `masking` (default `"ngram"`;
    `"token"` is BERT's single pieces), `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    # Setup: the example of kzoo.AlbertPreprocessor (tokenizer).
    preprocessor = kzoo.AlbertMaskedLMPreprocessor(tokenizer,
                                                   sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    assert preprocessor.masking == "ngram"   # ALBERT's n-gram masking
    ```
    """

    default_masking = "ngram"
