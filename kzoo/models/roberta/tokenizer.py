"""RoBERTa's byte-level BPE tokenizer: GPT-2's algorithm and merges, with
fairseq's ids and special tokens."""

import tensorflow as tf

from kzoo.models.gpt2.tokenizer import GPT2Tokenizer
from kzoo.core.registry import register
from kzoo.preprocessing.text import WHITESPACE

BOS, PAD, EOS, UNK, MASK = "<s>", "<pad>", "</s>", "<unk>", "<mask>"

class FairseqSpecialTokens:
    """fairseq's special tokens, as the RoBERTa family numbers and types
    them (mixed into RoBERTa's byte-level BPE and XLM-R's SentencePiece
    tokenizers): `<s>` opens a text, `</s>` ends and separates, `<pad>`,
    `<unk>`, and `<mask>`, which also swallows the whitespace before it, as
    the original tokenizer's (`lstrip=True`)."""

    special_tokens = (BOS, PAD, EOS, UNK, MASK)

    def normalize(self, text):
        # `<mask>` strips the whitespace on its left (Hugging Face's
        # AddedToken("<mask>", lstrip=True)); no other special token does.
        return tf.strings.regex_replace(text, WHITESPACE + "+" + MASK, MASK)

    @property
    def start_token_id(self):
        return self.token_to_id(BOS)

    @property
    def end_token_id(self):
        return self.token_to_id(EOS)

    # The names BERT-style packing reads: <s> opens, </s> separates.
    cls_token_id = start_token_id
    sep_token_id = end_token_id

    @property
    def pad_token_id(self):
        return self.token_to_id(PAD)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK)

    @property
    def mask_token_id(self):
        return self.token_to_id(MASK)

    @property
    def special_token_ids(self):
        return [self.token_to_id(t) for t in self.special_tokens]


@register
class RobertaTokenizer(FairseqSpecialTokens, GPT2Tokenizer):
    """Byte-level BPE with RoBERTa's vocabulary.

    RoBERTa's merges are GPT-2's, but its `vocab.json` maps the tokens to
    fairseq's dictionary ids: `<s>`=0, `<pad>`=1, `</s>`=2, `<unk>`=3, the
    BPE tokens, then `<mask>` last; so it is a different file from
    GPT-2's. Typed in a text, each special token is its id; `<mask>` also
    swallows the whitespace before it, as the original tokenizer's
    (`lstrip=True`), so `"The <mask> sat."` masks the word " sat"'s
    neighbour as a whole word would be: `["The", "<mask>", "Ġsat", "."]`.

    Args:
        vocabulary: path to RoBERTa's `vocab.json`.
        merges: path to `merges.txt`.

    `tokenize` adds no special tokens; `RobertaPreprocessor` packs
    `<s> A </s>` and `<s> A </s></s> B </s>`.

    Example:
    ```python
    import json
    from kzoo import presets
    # roberta_base_en's vocab.json comes with its weights (downloaded
    # once). Offline: GPT-2's BPE (kzoo ships it) in RoBERTa's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.RobertaTokenizer("vocab.json", gpt2.file("merges.txt"))
    ids = tokenizer("The <mask> sat.")
    assert [tokenizer.id_to_token(i) for i in ids] == [
        "The", "<mask>", "Ġsat", "."]
    assert tokenizer.detokenize(tokenizer("Hello world")) == "Hello world"
    ```
    """

    # A vocabulary trained for the family (`kzoo train-tokenizer`):
    # fairseq's dictionary order, <s> <pad> </s> <unk>, the BPE tokens,
    # <mask> last.
    trained_layout = {"first": (BOS, PAD, EOS, UNK), "last": (MASK,)}
