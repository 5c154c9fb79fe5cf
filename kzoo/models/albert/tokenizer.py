"""ALBERT's SentencePiece tokenizer: kzoo's SentencePiece base with the
original's text preprocessing and special pieces."""

import tensorflow as tf
import tensorflow_text as tf_text

from kzoo.core.registry import register
from kzoo.preprocessing.text import WHITESPACE
from kzoo.core.sentencepiece_tokenizer import SentencePieceTokenizer

PAD, UNK, CLS, SEP, MASK = "<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"

# Special tokens wait out the normalisation behind code points of the
# Supplementary Private Use Area-B, which no text is expected to hold.
_SHIELD = 0x100000

# Where a word begins for ALBERT's whole-word and n-gram masking: its
# create_pretraining_data.py (`_is_start_piece_sp`) counts these single
# pieces as words (the string as the original spells it: no apostrophe),
# and a piece holding any character outside them and a-z as a word of its
# own ("foreign characters ... as a whole piece": digits, accents, other
# scripts, "'").
_PUNCTUATION = frozenset('!"#$%&"()*+,-./:;?@[\\]^_`{|}~')
_IN_WORDS = _PUNCTUATION | frozenset("abcdefghijklmnopqrstuvwxyz")


@register
class AlbertTokenizer(SentencePieceTokenizer):
    """SentencePiece with ALBERT's preprocessing and special pieces.

    Text goes through the original's `preprocess_text` (as Hugging Face's
    `AlbertTokenizer` does it): "``" and "''" become '"'; unless
    `keep_accents`, NFKD and accents (combining marks) removed; lowercased
    when `lowercase` (the released models are uncased); every run of
    whitespace one space. Then the SentencePiece model (its own NFKC
    normalisation, a "▁" before each word) gives its own ids.

    The special pieces are the model's own: a released `spiece.model`
    holds `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4 (control
    pieces, and `<unk>`). Typed in a text each is its one id, as in Hugging
    Face's tokenizer (so `fill_mask("The [MASK] sat.")` works), and the
    text around them is tokenized on its own. A SentencePiece model
    without them is refused: transformers cannot build an AlbertTokenizer
    from one either. (The tests' stand-in is a real SentencePiece model
    with ALBERT's five pieces put first, as the released file has them:
    `scripts/make_albert_stand_in_spm.py`.)

    Args:
        proto: path to the `spiece.model`. None when the file comes later
            (`keras.saving.load_model`).
        lowercase: lowercase the text (Hugging Face `do_lower_case`).
        keep_accents: keep accents (Hugging Face `keep_accents`).

    `tokenize` adds no special tokens; `AlbertPreprocessor` packs
    `[CLS] A [SEP] (B [SEP])`. `detokenize` is SentencePiece's (`<unk>`
    reads " ⁇ ", control pieces vanish).

    Example:
    ```python
    from kzoo import datasets
    # albert_base_en_uncased's spiece.model comes with its weights
    # (downloaded once). Offline: a small one in ALBERT's layout.
    tokenizer = kzoo.AlbertTokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    ids = np.asarray(tokenizer("The [MASK] sat.")).tolist()
    assert tokenizer.mask_token_id in ids   # typed, it is its one id
    assert tokenizer.detokenize(tokenizer("Emma SMILED")) == "emma smiled"
    ```
    """

    special_tokens = (PAD, UNK, CLS, SEP, MASK)
    # The released layout: <pad>=0, <unk>=1, [CLS]=2, [SEP]=3, [MASK]=4.
    trainer_options = {"pad_id": 0, "unk_id": 1, "bos_id": -1, "eos_id": -1,
                       "control_symbols": [CLS, SEP, MASK]}

    def __init__(self, proto=None, lowercase=True, keep_accents=False,
                 **kwargs):
        self.lowercase = bool(lowercase)
        self.keep_accents = bool(keep_accents)
        super().__init__(proto=proto, **kwargs)

    def normalize(self, texts):
        """The original's `preprocess_text`, in TensorFlow string ops,
        special tokens left as they are."""
        for i, token in enumerate(self.special_tokens):
            texts = tf.strings.regex_replace(
                texts, _literal(token), chr(_SHIELD + i))
        texts = tf.strings.regex_replace(texts, "``|''", '"')
        if not self.keep_accents:
            texts = tf_text.normalize_utf8(texts, "NFKD")
            texts = tf.strings.regex_replace(texts, r"\p{Mn}", "")
        if self.lowercase:
            texts = tf.strings.lower(texts, encoding="utf-8")
        texts = tf.strings.regex_replace(texts, WHITESPACE + "+", " ")
        for i, token in enumerate(self.special_tokens):
            texts = tf.strings.regex_replace(
                texts, chr(_SHIELD + i), _literal(token, replacement=True))
        return texts

    def word_start_table(self):
        """A NumPy bool array of length `vocabulary_size`: True where a
        piece begins a word as ALBERT's pretraining data defines words
        (`_is_start_piece_sp`): a piece that starts with "▁" or "<", a
        single punctuation mark, a piece with a character that is no
        ASCII letter or punctuation, and every special token. So "," and
        "'s" are words of their own, where "▁" alone would join them to
        the word before."""
        table = super().word_start_table()
        for i, piece in enumerate(self.get_vocabulary()):
            table[i] |= (piece.startswith("<") or piece in _PUNCTUATION or
                         any(c.lower() not in _IN_WORDS for c in piece))
        return table

    @property
    def pad_token_id(self):
        return self.token_to_id(PAD)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK)

    @property
    def cls_token_id(self):
        return self.token_to_id(CLS)

    @property
    def sep_token_id(self):
        return self.token_to_id(SEP)

    @property
    def mask_token_id(self):
        return self.token_to_id(MASK)

    def get_config(self):
        config = super().get_config()
        config.update({"lowercase": self.lowercase,
                       "keep_accents": self.keep_accents})
        return config


def _literal(token, replacement=False):
    """`token` as an RE2 pattern matching it literally, or (replacement)
    as a rewrite string (where only a backslash is special)."""
    if replacement:
        return token.replace("\\", "\\\\")
    return "".join(c if c.isalnum() else "\\" + c for c in token)
