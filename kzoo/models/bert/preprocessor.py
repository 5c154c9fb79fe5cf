"""BERT's input packing: [CLS] a [SEP] (b [SEP]), segment ids, padding."""

from kzoo.core.registry import register
from kzoo.models.bert.tokenizer import BertTokenizer
from kzoo.tasks.segment_preprocessor import SegmentPreprocessor


@register
class BertPreprocessor(SegmentPreprocessor):
    """Raw text (one string per example, or a tuple of segments for
    sentence pairs) -> `token_ids`, `segment_ids`, `padding_mask`.

    Args:
        tokenizer: a `BertTokenizer`.
        sequence_length, truncate: see `kzoo.tasks.SegmentPreprocessor`.

    Example:
    ```python
    preprocessor = kzoo.BertPreprocessor.from_preset("bert_base",
                                                     sequence_length=16)
    preprocessor(["The quick brown fox."])            # single texts
    preprocessor((["The fox."], ["It jumped."]))      # pairs
    ```
    """

    tokenizer_cls = BertTokenizer
