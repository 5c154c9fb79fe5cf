"""XLM-R's tokenizer: a SentencePiece model with fairseq's ids."""

import tensorflow as tf

from kzoo.core.registry import register
from kzoo.models.roberta.tokenizer import (BOS, EOS, MASK, PAD, UNK,
                                           FairseqSpecialTokens)
from kzoo.preprocessing.text import WHITESPACE
from kzoo.core.sentencepiece_tokenizer import SentencePieceTokenizer

# The SentencePiece model's own first pieces, which fairseq renumbers.
_MODEL_SPECIALS = [UNK, BOS, EOS]


@register
class XLMRobertaTokenizer(FairseqSpecialTokens, SentencePieceTokenizer):
    """SentencePiece with XLM-R's numbering, the original's (fairseq's
    dictionary, as Hugging Face's `XLMRobertaTokenizer` builds it):
    `<s>`=0, `<pad>`=1, `</s>`=2, `<unk>`=3, the model's piece `i` at
    `i + 1` (the "fairseq offset"), except the model's own `<unk>`, `<s>`,
    `</s>` (pieces 0-2), which are the ids above; `<mask>` last (250,001
    in the released vocabulary of 250,002).

    Whitespace is split as the original does (any Unicode whitespace run
    is one word boundary); typed in a text, each special token is its id,
    and `<mask>` swallows the whitespace before it.

    Args:
        proto: path to the `sentencepiece.bpe.model` (a SentencePiece
            unigram model despite its name).

    `tokenize` adds no special tokens; `XLMRobertaPreprocessor` packs
    `<s> A </s>` and `<s> A </s></s> B </s>`.

    Example:
    ```python
    from kzoo import datasets
    # xlm_roberta_base_multi's sentencepiece.bpe.model comes with its
    # weights (downloaded once). Offline: a small one in XLM-R's layout.
    tokenizer = kzoo.XLMRobertaTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    # fairseq's ids: <s>=0, <pad>=1, </s>=2, <unk>=3, ..., <mask> last.
    assert tokenizer.mask_token_id == tokenizer.vocabulary_size - 1
    assert tokenizer.detokenize(tokenizer("Emma smiled")) == "Emma smiled"
    ```
    """

    asset_files = {"proto": "sentencepiece.bpe.model"}
    # The released model's pieces: <unk>=0, <s>=1, </s>=2 (fairseq's ids
    # come from them: `family_vocabulary`).
    trainer_options = {"unk_id": 0, "bos_id": 1, "eos_id": 2, "pad_id": -1}

    def family_vocabulary(self, pieces):
        if pieces[:3] != _MODEL_SPECIALS:
            raise ValueError(
                f"its first pieces are {pieces[:3]}; XLM-R's SentencePiece "
                f"model starts with {_MODEL_SPECIALS}")
        return [BOS, PAD, EOS, UNK, *pieces[3:], MASK]

    def normalize(self, text):
        # Hugging Face splits words on any whitespace before SentencePiece
        # sees them (SentencePiece itself only on " ").
        text = tf.strings.regex_replace(text, WHITESPACE + "+", " ")
        return super().normalize(text)
