"""MobileBERT's tokenizer: BERT's uncased WordPiece."""

from kzoo.core.registry import register
from kzoo.models.bert.tokenizer import BertTokenizer


@register
class MobileBertTokenizer(BertTokenizer):
    """WordPiece with BERT's special tokens ([PAD], [UNK], [CLS], [SEP],
    [MASK]); `google/mobilebert-uncased` reads uncased English with a
    30,522-token `vocab.txt`, which comes with its weights. Its own class
    so that presets and preprocessors name the family; the algorithm is
    `kzoo.BertTokenizer`'s.

    Args: as `kzoo.BertTokenizer`'s (`vocabulary`, `lowercase`).

    Example:
    ```python
    # mobilebert_en_uncased's vocab.txt comes with its weights; offline,
    # bert-base-uncased's (an uncased WordPiece file of the same size).
    vocabulary = kzoo.presets.resolve("bert_base_en_uncased").file(
        "vocab.txt")
    tokenizer = kzoo.MobileBertTokenizer(str(vocabulary), lowercase=True)
    assert tokenizer(["Hello world"]) == [[7592, 2088]]
    ```
    """
