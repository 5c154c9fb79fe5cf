"""DistilBERT's tokenizer: BERT's WordPiece, unchanged."""

from kzoo.models.bert.tokenizer import BertTokenizer
from kzoo.core.registry import register


@register
class DistilBertTokenizer(BertTokenizer):
    """WordPiece with BERT's special tokens and vocabulary files: the
    DistilBERT checkpoints reuse their teacher's `vocab.txt`
    (`distilbert-base-uncased` is bert-base-uncased's, the multilingual one
    mBERT's, cased). Its own class so that presets and preprocessors name
    the family; the algorithm is `kzoo.BertTokenizer`'s.

    Args:
        vocabulary: path to a `vocab.txt`.
        lowercase: lowercase and strip accents (uncased checkpoints).

    Example:
    ```python
    tokenizer = kzoo.DistilBertTokenizer.from_preset("distil_bert_base")
    assert tokenizer(["Hello world"]) == [[7592, 2088]]
    ```
    """
