"""DeBERTa-v3's SentencePiece tokenizer."""

from pathlib import Path

import sentencepiece
import tensorflow as tf
import tensorflow_text as tf_text

from kzoo.core.registry import register
from kzoo.preprocessing.text import WHITESPACE
from kzoo.core.sentencepiece_tokenizer import (SentencePieceTokenizer,
                                                 _literal)

CLS, SEP, UNK, PAD, MASK = "[CLS]", "[SEP]", "[UNK]", "[PAD]", "[MASK]"

@register
class DebertaV3Tokenizer(SentencePieceTokenizer):
    """DeBERTa-v3's SentencePiece model with its special tokens.

    The released `spm.model` holds `[PAD]`=0, `[CLS]`=1, `[SEP]`=2,
    `[UNK]`=3 as pieces; `[MASK]` is no piece and comes after them
    (128000 for the English models, 250101 for mDeBERTa), as Hugging
    Face's `DebertaV2Tokenizer` adds it. Any of the five the model lacks
    is appended in the order `[CLS] [SEP] [UNK] [PAD] [MASK]`, again as
    Hugging Face does (a model made for something else, e.g. the tests'
    Botchan model, works the same in both). Typed in a text each is its
    id. Text is cleaned as Hugging Face's tokenizer cleans it first:
    whitespace runs, tabs and newlines become one space, NFC, trailing
    whitespace dropped.

    Args:
        proto: path to the SentencePiece model (`spm.model`).

    `tokenize` adds no special tokens; `DebertaV3Preprocessor` packs
    `[CLS] A [SEP] (B [SEP])`.

    Example:
    ```python
    from kzoo import datasets
    # deberta_v3_base_en's spm.model comes with its weights (downloaded
    # once). Offline: a small one in DeBERTa-v3's layout.
    tokenizer = kzoo.DebertaV3Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spm.model",
        vocabulary_size=300)
    ids = np.asarray(tokenizer("The [MASK] sat.")).tolist()
    assert tokenizer.mask_token_id in ids   # typed, it is its one id
    assert tokenizer.detokenize(tokenizer("Emma smiled")) == "Emma smiled"
    ```
    """

    asset_files = {"proto": "spm.model"}
    special_tokens = (CLS, SEP, UNK, PAD, MASK)
    # The released layout: [PAD]=0, [CLS]=1, [SEP]=2, [UNK]=3 ([MASK]
    # appended).
    trainer_options = {"pad_id": 0, "bos_id": 1, "eos_id": 2, "unk_id": 3,
                       "pad_piece": PAD, "bos_piece": CLS, "eos_piece": SEP,
                       "unk_piece": UNK}

    def family_vocabulary(self, pieces):
        present = set(pieces)
        return list(pieces) + [t for t in self.special_tokens
                               if t not in present]

    def read_assets(self, proto):
        hub = super().read_assets(proto)
        # The model's control pieces (`<s>`, `</s>` where it has them)
        # typed in a text are kept whole too, as Hugging Face's tokenizer
        # keeps them.
        model = sentencepiece.SentencePieceProcessor(
            model_proto=Path(proto).read_bytes())
        tables = self._tables.value
        for i in range(model.get_piece_size()):
            piece = model.id_to_piece(i)
            if model.is_control(i) and piece not in tables.special_ids:
                tables.special_ids[piece] = int(tables.to_family[i])
        return hub

    def _special_pattern(self):
        # Longest first: a token that begins another must not cut it.
        tokens = sorted(self._read().special_ids, key=len, reverse=True)
        return "|".join(_literal(t) for t in tokens)

    def normalize(self, text):
        # Hugging Face's DebertaV2Tokenizer normalizer: Replace(r"\s{2,}|
        # [\n\r\t]", " "), NFC, Strip(right).
        text = tf.strings.regex_replace(
            text, WHITESPACE + "{2,}|[\n\r\t]", " ")
        text = tf_text.normalize_utf8(text, "NFC")
        return tf.strings.regex_replace(text, WHITESPACE + "+$", "")

    @property
    def cls_token_id(self):
        return self.token_to_id(CLS)

    @property
    def sep_token_id(self):
        return self.token_to_id(SEP)

    @property
    def pad_token_id(self):
        return self.token_to_id(PAD)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK)

    @property
    def mask_token_id(self):
        return self.token_to_id(MASK)
