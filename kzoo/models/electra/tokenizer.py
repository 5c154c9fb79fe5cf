"""ELECTRA's tokenizer: BERT's WordPiece (the released models use the
bert-base-uncased vocabulary itself)."""

from kzoo.models.bert.tokenizer import BertTokenizer
from kzoo.core.registry import register


@register
class ElectraTokenizer(BertTokenizer):
    """WordPiece with BERT's special tokens ([PAD], [UNK], [CLS], [SEP],
    [MASK]); the released ELECTRA models' `vocab.txt` is bert-base-uncased's
    (30,522 tokens).

    Args: as `kzoo.BertTokenizer`'s (`vocabulary`, `lowercase`).

    Example:
    ```python
    tokenizer = kzoo.ElectraTokenizer.from_preset(
        "electra_small_discriminator_en_uncased")
    tokenizer(["Hello world"])  # [[7592, 2088]]
    ```
    """
