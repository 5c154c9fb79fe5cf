"""BERT's WordPiece tokenizer (keras-hub `WordPieceTokenizer`'s vocabulary
and detokenizer; the word split and WordPiece in tf-text, with BERT's
word-length limit in characters)."""

import weakref

import keras_hub
import numpy as np
import tensorflow as tf
import tensorflow_text as tf_text

from kzoo.core.registry import register
from kzoo.core.shared_hub_tokenizers import (asset_key,
                                               shared_hub_tokenizer)
from kzoo.core.tokenizer import (Tokenizer, TokenizerAssetError,
                                   read_lines_asset)

# BERT's longest word, in characters (`max_input_chars_per_word`): a longer
# one is one [UNK]. keras-hub's WordPiece (tf-text's FastWordpieceTokenizer)
# counts bytes instead, so a word of 34-100 characters of a 3-byte script
# (Devanagari, Hangul, kana) or 51-100 of a 2-byte one (Cyrillic, Greek)
# became [UNK] where BERT splits it.
MAX_CHARACTERS_PER_WORD = 100
# tf-text's limit, in bytes, for words within BERT's: 4 bytes a character.
_MAX_BYTES_PER_WORD = 4 * MAX_CHARACTERS_PER_WORD
# BERT's word boundaries (its BasicTokenizer): whitespace and control
# characters split words and are dropped; punctuation (all non-alphanumeric
# ASCII, and Unicode P*) and CJK ideographs are words of their own.
_WHITESPACE = r"\s|\p{Cc}|\p{Cf}"
_PUNCTUATION = r"[!-/:-@\[-`{-~\p{P}]"
_CJK = (r"[\x{4E00}-\x{9FFF}\x{3400}-\x{4DBF}\x{20000}-\x{2A6DF}"
        r"\x{2A700}-\x{2B73F}\x{2B740}-\x{2B81F}\x{2B820}-\x{2CEAF}"
        r"\x{F900}-\x{FAFF}\x{2F800}-\x{2FA1F}]")
# Each keras-hub tokenizer's tf-text WordPiece (built with it, shared with
# it: `shared_hub_tokenizer`).
_WORD_PIECES = weakref.WeakKeyDictionary()


@register
class BertTokenizer(Tokenizer):
    """WordPiece with BERT's special tokens.

    Args:
        vocabulary: path to a `vocab.txt` (one token per line, id = line).
            None when the file comes later (`keras.saving.load_model`).
        lowercase: lowercase and strip accents, as the uncased checkpoints
            were trained (Hugging Face `do_lower_case`).

    `tokenize` adds no special tokens; the preprocessor packs [CLS]/[SEP].

    Example:
    ```python
    tokenizer = kzoo.BertTokenizer.from_preset("bert_base_en_uncased")
    ids = tokenizer(["Hello world"])
    assert ids == [[7592, 2088]]
    assert tokenizer.detokenize(ids) == ["hello world"]
    ```
    """

    asset_files = {"vocabulary": "vocab.txt"}
    special_token_names = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")
    # What `kzoo train-tokenizer` trains for the family: WordPiece, the
    # special tokens first in this order ([PAD]=0 ... [MASK]=4), as Hugging
    # Face's BertWordPieceTokenizer lays out a new vocabulary (Google's
    # released one keeps 99 [unused] slots between [PAD] and [UNK]).
    vocabulary_kinds = ("wordpiece",)
    trained_layout = {"first": special_token_names, "last": (),
                      "unknown": "[UNK]"}

    def __init__(self, vocabulary=None, lowercase=True, **kwargs):
        super().__init__(**kwargs)
        self.lowercase = bool(lowercase)
        self.set_assets(vocabulary=vocabulary)

    def read_assets(self, vocabulary):
        tokens = read_lines_asset(vocabulary)
        if not tokens:
            raise TokenizerAssetError(
                f"{type(self).__name__}: vocabulary={str(vocabulary)!r} is "
                "empty; a vocab.txt holds one token per line.")
        present = set(tokens)
        missing = [t for t in self.special_token_names if t not in present]
        if missing:
            raise TokenizerAssetError(
                f"Vocabulary {vocabulary} lacks BERT's special tokens "
                f"{missing}.")
        def build():
            hub = keras_hub.tokenizers.WordPieceTokenizer(
                vocabulary=tokens,
                # Case and accents are handled by `normalize` (below), the
                # way Hugging Face's BertNormalizer does; keras-hub's own
                # lowercasing is NFKC case folding, which rewrites e.g.
                # "½" and "～".
                lowercase=False,
                strip_accents=False,
                oov_token="[UNK]",
                # "[MASK]" typed in a string is the mask token, as in the
                # original tokenizer (fill-mask prompts rely on it).
                special_tokens=list(self.special_token_names),
                special_tokens_in_strings=True,
                dtype="int32",
            )
            # The same vocabulary and rules with a limit in bytes no word
            # of BERT's 100 characters exceeds; `_tokenize_tf` makes the
            # longer ones [UNK] first.
            _WORD_PIECES[hub] = tf_text.FastWordpieceTokenizer(
                vocab=tokens, suffix_indicator="##", unknown_token="[UNK]",
                max_bytes_per_word=_MAX_BYTES_PER_WORD,
                token_out_type=tf.int32, no_pretokenization=True,
                support_detokenization=False)
            return hub
        # BERT, DistilBERT and ELECTRA tokenizers of one vocab.txt share it.
        key = ("wordpiece", self.special_token_names, asset_key(vocabulary))
        return shared_hub_tokenizer(key, build)

    @property
    def pad_token_id(self):
        return self.token_to_id("[PAD]")

    @property
    def unk_token_id(self):
        return self.token_to_id("[UNK]")

    @property
    def cls_token_id(self):
        return self.token_to_id("[CLS]")

    @property
    def sep_token_id(self):
        return self.token_to_id("[SEP]")

    @property
    def mask_token_id(self):
        return self.token_to_id("[MASK]")

    def normalize(self, text):
        """Hugging Face's `BertNormalizer`, in TensorFlow string ops.

        1. Clean: tab/newline/CR become spaces; every other control or
           format character (Unicode category C*, e.g. the zero-width
           joiner inside emoji sequences) and U+FFFD are removed, without
           splitting the word they sit in; any Unicode space (Z*) becomes
           a plain space.
        2. When `lowercase`: NFD, drop non-spacing marks (accents), then
           Unicode lowercase. Unlike NFKC case folding this leaves
           compatibility characters alone ("½" stays one token).

        Special tokens typed in the text ("[MASK]") are kept as they are.
        """
        text = tf.strings.regex_replace(text, r"[\t\n\r]", " ")
        text = tf.strings.regex_replace(text, r"[\p{C}\x{FFFD}]", "")
        text = tf.strings.regex_replace(text, r"\p{Z}", " ")
        if not self.lowercase:
            return text
        # Shield special tokens from lowercasing behind private-use code
        # points; step 1 removed every private-use character the text had.
        for i, token in enumerate(self.special_token_names):
            text = tf.strings.regex_replace(
                text, _literal(token), chr(0xE000 + i))
        text = tf_text.normalize_utf8(text, "NFD")
        text = tf.strings.regex_replace(text, r"\p{Mn}", "")
        text = tf.strings.lower(text, encoding="utf-8")
        for i, token in enumerate(self.special_token_names):
            text = tf.strings.regex_replace(text, chr(0xE000 + i), token)
        return text

    def _tokenize_tf(self, texts):
        """Texts -> ids as keras-hub's WordPiece tokenizer splits and
        tokenizes them, but with BERT's word limit in characters: a word
        longer than `MAX_CHARACTERS_PER_WORD` is one [UNK], a shorter one
        is split whatever its size in bytes (as Hugging Face's
        `BertTokenizer` and `BertTokenizerFast`)."""
        if not isinstance(texts, tf.RaggedTensor) and texts.shape.rank == 0:
            return self._tokenize_tf(texts[tf.newaxis])[0]  # one text
        if isinstance(texts, tf.RaggedTensor):
            texts = tf.ragged.map_flat_values(self.normalize, texts)
        else:
            texts = self.normalize(texts)
        special = "|".join(_literal(t) for t in self.special_token_names)
        words = tf_text.regex_split(
            texts, delim_regex_pattern="|".join(
                [special, _WHITESPACE, _PUNCTUATION, _CJK]),
            keep_delim_regex_pattern="|".join([special, _PUNCTUATION, _CJK]))
        too_long = tf.strings.length(words.flat_values, unit="UTF8_CHAR") > \
            MAX_CHARACTERS_PER_WORD
        words = words.with_flat_values(
            tf.where(too_long, "[UNK]", words.flat_values))
        pieces = _WORD_PIECES[self._hub()].tokenize(words)
        return pieces.merge_dims(-2, -1)  # (..., tokens)

    @property
    def special_token_ids(self):
        return [self.token_to_id(t) for t in self.special_token_names]

    def word_start_table(self):
        """True for tokens that begin a word: WordPiece marks the tokens that
        continue one with "##" (special tokens begin words)."""
        return np.array([not token.startswith("##")
                         for token in self.get_vocabulary()], dtype=bool)

    def get_config(self):
        config = super().get_config()
        config.update({"lowercase": self.lowercase})
        return config


def _literal(token):
    """A regex matching `token` literally (RE2 syntax)."""
    return "".join("\\" + c if not c.isalnum() else c for c in token)
