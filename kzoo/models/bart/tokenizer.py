"""BART's tokenizer: RoBERTa's byte-level BPE, unchanged."""

from kzoo.models.registry import register
from kzoo.models.roberta.tokenizer import RobertaTokenizer


@register
class BartTokenizer(RobertaTokenizer):
    """Byte-level BPE with BART's vocabulary, which is RoBERTa's: GPT-2's
    merges, fairseq's ids in `vocab.json` (`<s>`=0, `<pad>`=1, `</s>`=2,
    `<unk>`=3, ..., `<mask>`=50264), and `<mask>` swallowing the
    whitespace before it. A class of its own so BART presets name BART's
    tokenizer; everything is `RobertaTokenizer`'s.

    Args:
        vocabulary: path to BART's `vocab.json`.
        merges: path to `merges.txt`.

    `tokenize` adds no special tokens; `BartSeq2SeqLMPreprocessor` frames
    inputs and targets as `<s> text </s>`.

    Example:
    ```python
    tokenizer = kzoo.BartTokenizer.from_preset("bart_base_en")
    tokenizer("Hello world")  # [31414, 232]
    ```
    """
