"""BART's tokenizer: RoBERTa's byte-level BPE, unchanged."""

from kzoo.core.registry import register
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
    import json
    from kzoo import presets
    # bart_base_en's vocab.json comes with its weights (downloaded once).
    # Offline: GPT-2's BPE (kzoo ships it) in BART's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.BartTokenizer("vocab.json", gpt2.file("merges.txt"))
    ids = tokenizer("The <mask> sat.")
    assert [tokenizer.id_to_token(i) for i in ids] == [
        "The", "<mask>", "Ġsat", "."]
    assert tokenizer.detokenize(tokenizer("Hello world")) == "Hello world"
    ```
    """
