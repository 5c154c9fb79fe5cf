"""BERT's WordPiece tokenizer (keras-hub `WordPieceTokenizer`)."""

import keras_hub

from kzoo.models.registry import register
from kzoo.models.tokenizer import Tokenizer


@register
class BertTokenizer(Tokenizer):
    """WordPiece with BERT's special tokens.

    Args:
        vocabulary: path to a `vocab.txt` (one token per line, id = line).
        lowercase: lowercase and strip accents, as the uncased checkpoints
            were trained (Hugging Face `do_lower_case`).

    `tokenize` adds no special tokens; the preprocessor packs [CLS]/[SEP].
    """

    asset_files = {"vocabulary": "vocab.txt"}
    special_token_names = ("[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]")

    def __init__(self, vocabulary, lowercase=True, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary = str(vocabulary)
        self.lowercase = bool(lowercase)
        self.inner = keras_hub.tokenizers.WordPieceTokenizer(
            vocabulary=self.vocabulary,
            lowercase=self.lowercase,
            strip_accents=self.lowercase,
            oov_token="[UNK]",
            # "[MASK]" typed in a string is the mask token, as in the
            # original tokenizer (fill-mask prompts rely on it).
            special_tokens=list(self.special_token_names),
            special_tokens_in_strings=True,
            dtype="int32",
        )
        vocabulary_tokens = set(self.get_vocabulary())
        missing = [t for t in self.special_token_names
                   if t not in vocabulary_tokens]
        if missing:
            raise ValueError(
                f"Vocabulary {self.vocabulary} lacks BERT's special tokens "
                f"{missing}.")
        self.pad_token_id = self.token_to_id("[PAD]")
        self.unk_token_id = self.token_to_id("[UNK]")
        self.cls_token_id = self.token_to_id("[CLS]")
        self.sep_token_id = self.token_to_id("[SEP]")
        self.mask_token_id = self.token_to_id("[MASK]")

    @property
    def special_token_ids(self):
        return [self.token_to_id(t) for t in self.special_token_names]

    def get_config(self):
        config = super().get_config()
        config.update({"vocabulary": self.vocabulary,
                       "lowercase": self.lowercase})
        return config
