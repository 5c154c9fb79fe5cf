"""DeBERTa-v3's input packing: BERT's ([CLS] a [SEP] (b [SEP])), with
its own tokens and no segment input."""

from kzoo.tasks.masked_lm_preprocessor import MaskedLMPreprocessor
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor
from kzoo.models.deberta_v3.tokenizer import DebertaV3Tokenizer
from kzoo.core.registry import register


@register
class DebertaV3Preprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of two lists for
    sentence pairs) -> `token_ids`, `padding_mask`, packed as Hugging
    Face's `DebertaV2Tokenizer`: `[CLS] A [SEP]` and `[CLS] A [SEP] B
    [SEP]`, padded with `[PAD]`.

    The released models have no token types (`type_vocab_size` 0), so
    the segment ids BERT's packing makes are dropped.

    Args:
        tokenizer: a `DebertaV3Tokenizer`.
        sequence_length: packed length; longer inputs are truncated.
        truncate: `"round_robin"` or `"waterfall"` (see
            `kzoo.tasks.SegmentPreprocessor`).

    Example:
    ```python
    from kzoo import datasets
    # deberta_v3_base_en's spm.model comes with its weights (downloaded
    # once). Offline: a small one in DeBERTa-v3's layout.
    tokenizer = kzoo.DebertaV3Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    preprocessor = kzoo.DebertaV3Preprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    ids = np.asarray(x["token_ids"][0]).tolist()   # [CLS] A [SEP] B [SEP]
    assert ids[0] == tokenizer.cls_token_id
    assert ids.count(tokenizer.sep_token_id) == 2
    ```
    """

    tokenizer_cls = DebertaV3Tokenizer
    segment_input = False  # no token types


@register
class DebertaV3MaskedLMPreprocessor(DebertaV3Preprocessor,
                                    MaskedLMPreprocessor):
    """Raw text -> masked inputs (x), original ids (y), weights:
    DeBERTa-v3's packing, then BERT's masking (15% selected, 80% `[MASK]`,
    10% random, 10% kept; never a special token), drawn afresh on every
    call.

    x: `token_ids` (masked), `padding_mask`, `mask_positions`.
    y: the original ids at `mask_positions`.
    sample_weight: 1 for real selections, 0 where fewer were selected.

    Args: `DebertaV3Preprocessor`'s, and `mask_selection_rate`,
    `mask_selection_length`, `mask_token_rate`, `random_token_rate` (see
    `kzoo.tasks.MaskedLMPreprocessor`).

    Example:
    ```python
    # Setup: the example of kzoo.DebertaV3Preprocessor (tokenizer).
    preprocessor = kzoo.DebertaV3MaskedLMPreprocessor(tokenizer,
                                                      sequence_length=32)
    x, y, sample_weight = preprocessor(["The quick brown fox jumped."])
    assert x["token_ids"].shape == (1, 32)
    assert y.shape == x["mask_positions"].shape   # the ids behind masks
    ```
    """
