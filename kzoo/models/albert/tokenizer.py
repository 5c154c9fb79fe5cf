"""ALBERT's SentencePiece tokenizer (keras-hub `SentencePieceTokenizer`),
with the original's text preprocessing."""

import keras_hub
import tensorflow as tf
import tensorflow_text as tf_text

from kzoo.models.registry import register
from kzoo.models.text_tensors import as_tf
from kzoo.models.tokenizer import Tokenizer, TokenizerAssetError
from kzoo.utils import spm_proto

PAD, UNK, CLS, SEP, MASK = "<pad>", "<unk>", "[CLS]", "[SEP]", "[MASK]"
ALBERT_PIECES = (PAD, UNK, CLS, SEP, MASK)

# Whitespace as `tokenizers`' WhitespaceSplit sees it (Rust's
# `char::is_whitespace`, the Unicode White_Space property), in RE2 syntax.
_WHITESPACE = r"[\t\n\x0b\x0c\r\x{85}\p{Z}]+"


def _literal(token):
    """A regex matching `token` literally (RE2 syntax)."""
    return "".join(c if c.isalnum() else "\\" + c for c in token)


@register
class AlbertTokenizer(Tokenizer):
    """SentencePiece with ALBERT's preprocessing and special pieces.

    Text goes through the original's `preprocess_text` (as Hugging Face's
    `AlbertTokenizer` does it): "``" and "''" become '"'; unless
    `keep_accents`, NFKD and accents (combining marks) removed; lowercased
    when `lowercase` (the released models are uncased); every run of
    whitespace one space. Then the SentencePiece model (its own NFKC
    normalisation, a "▁" before each word) gives its own ids.

    Special pieces: the model's control pieces and its `<unk>` (ALBERT's
    `<pad>`=0, `<unk>`=1, `[CLS]`=2, `[SEP]`=3, `[MASK]`=4) are each one
    id when typed in a text, as in Hugging Face's tokenizer (so
    `fill_mask("The [MASK] sat.")` works); the text around them is
    tokenized on its own. The model must hold the five ALBERT pieces; a
    SentencePiece model without them is refused (transformers'
    AlbertTokenizer cannot be built from one either). The test stand-in
    puts them in front of a real model's pieces, as the released
    `spiece.model` has them (scripts/make_albert_stand_in_spm.py).

    Args:
        proto: path to the `spiece.model`. None when the file comes later
            (`keras.saving.load_model`).
        lowercase: lowercase the text (Hugging Face `do_lower_case`).
        keep_accents: keep accents (Hugging Face `keep_accents`).

    `tokenize` adds no special tokens; `AlbertPreprocessor` packs
    `[CLS] A [SEP] (B [SEP])`.

    Example:
    ```python
    tokenizer = kzoo.AlbertTokenizer.from_preset("albert_base_en_uncased")
    tokenizer("The [MASK] sat.")
    ```
    """

    asset_files = {"proto": "spiece.model"}

    def __init__(self, proto=None, lowercase=True, keep_accents=False,
                 **kwargs):
        super().__init__(**kwargs)
        self.lowercase = bool(lowercase)
        self.keep_accents = bool(keep_accents)
        self._special_pieces = {}
        self.set_assets(proto=proto)

    def read_assets(self, proto):
        data = proto.read_bytes()
        try:
            pieces = spm_proto.read_pieces(data)
        except (ValueError, UnicodeDecodeError) as e:
            raise TokenizerAssetError(
                f"AlbertTokenizer: proto={str(proto)!r} is not a "
                f"SentencePiece model ({e}); pass the checkpoint's "
                "spiece.model.") from None
        present = {piece for piece, _, _ in pieces}
        missing = [p for p in ALBERT_PIECES if p not in present]
        if missing:
            raise TokenizerAssetError(
                f"AlbertTokenizer: the SentencePiece model {proto} lacks "
                f"ALBERT's special pieces {missing}. ALBERT's spiece.model "
                "holds <pad>, <unk>, [CLS], [SEP] and [MASK] (ids 0-4); "
                "use the checkpoint's spiece.model.")
        # Typed in a text, each of these is one id (split out first).
        self._special_pieces = {
            piece: i for i, (piece, _, kind) in enumerate(pieces)
            if kind in (spm_proto.CONTROL, spm_proto.UNKNOWN,
                        spm_proto.USER_DEFINED)}
        return keras_hub.tokenizers.SentencePieceTokenizer(
            proto=data, dtype="int32")

    # ------------------------------------------------------------------
    # Text -> ids
    # ------------------------------------------------------------------
    def normalize(self, text):
        """The original's `preprocess_text`, in TensorFlow string ops."""
        text = tf.strings.regex_replace(text, "``|''", '"')
        if not self.keep_accents:
            text = tf_text.normalize_utf8(text, "NFKD")
            text = tf.strings.regex_replace(text, r"\p{Mn}", "")
        if self.lowercase:
            text = tf.strings.lower(text, encoding="utf-8")
        return tf.strings.strip(
            tf.strings.regex_replace(text, _WHITESPACE, " "))

    def tokenize_tf(self, texts):
        if isinstance(texts, tf.RaggedTensor):
            return tf.ragged.map_flat_values(self.tokenize_tf, texts)
        texts = tf.convert_to_tensor(texts)
        if texts.shape.rank == 0:
            return self.tokenize_tf(texts[None])[0]
        hub = self._hub()
        pattern = "|".join(_literal(p) for p in sorted(
            self._special_pieces, key=len, reverse=True))
        # (batch, chunks): the special pieces, and the text between them.
        chunks = tf_text.regex_split(texts, pattern,
                                     keep_delim_regex_pattern=pattern)
        flat = chunks.flat_values
        special = tf.zeros_like(flat, dtype="int32") - 1
        for piece, index in self._special_pieces.items():
            special = tf.where(tf.equal(flat, piece), index, special)
        is_special = special >= 0
        # Each text chunk tokenized on its own (a "▁" before its first
        # word, as transformers does); a special chunk tokenizes to [].
        ids = self._spm_tokenize(
            tf.where(is_special, "", self.normalize(flat)))
        if not isinstance(ids, tf.RaggedTensor):
            ids = tf.RaggedTensor.from_tensor(ids)
        own = tf.ragged.boolean_mask(special[:, None], is_special[:, None])
        ids = tf.concat([tf.cast(ids, "int32"), own], axis=1)
        return chunks.with_flat_values(ids).merge_dims(1, 2)

    def _spm_tokenize(self, texts):
        """SentencePiece ids of `texts` (1-D), ragged."""
        if tf.executing_eagerly():
            return as_tf(self._hub().tokenize(texts))
        # Traced (tf.data): a TF op whose model lives in a TF resource.
        # keras.utils.set_random_seed (tf.random.set_seed) clears TF's
        # kernel cache, and that resource with it, so an op made once
        # would fail in any pipeline traced after a reseed. Make one for
        # each trace, outside the graph (where TF resources must be made).
        with tf.init_scope():
            op = tf_text.SentencepieceTokenizer(
                model=self._hub().proto, out_type=tf.int32)
        return op.tokenize(texts)

    # ------------------------------------------------------------------
    # Special tokens
    # ------------------------------------------------------------------
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

    @property
    def special_token_ids(self):
        self._hub()
        return sorted(self._special_pieces.values())

    def get_config(self):
        config = super().get_config()
        config.update({"lowercase": self.lowercase,
                       "keep_accents": self.keep_accents})
        return config
