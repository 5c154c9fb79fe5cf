"""ELMo's tokenizer: whitespace-separated words, a word vocabulary for the
language model's targets, and the original's character ids."""

import tensorflow as tf

from kzoo.models.elmo.characters import BOS_TOKEN, EOS_TOKEN, character_ids_tf
from kzoo.core.registry import register
from kzoo.preprocessing.word_vocabulary import WordVocabulary, split_words
from kzoo.core.tokenizer import (Tokenizer, TokenizerAssetError,
                                   read_lines_asset)

UNK_TOKEN = "<UNK>"
SPECIAL_TOKENS = (BOS_TOKEN, EOS_TOKEN, UNK_TOKEN)


@register
class ElmoTokenizer(Tokenizer):
    """Whitespace tokenisation into words, as ELMo's original code reads
    its (pre-tokenised) text.

    `tokenize` gives word ids in the vocabulary (the language model's
    targets; unknown words are `<UNK>`); `character_ids` gives the
    original's 50 character ids per word, which is what `ElmoBackbone`
    reads: the representations themselves never depend on the vocabulary.

    Args:
        vocabulary: a word list, one word per line (id = line), holding
            `<S>`, `</S>` and `<UNK>` (the 1B Word Benchmark's
            `vocab-2016-09-10.txt` for the released models).

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    ids = tokenizer(["the cat barked ."])[0]   # word ids
    assert [tokenizer.id_to_token(i) for i in ids] == [
        "the", "cat", "<UNK>", "."]
    # What the backbone reads: 50 character ids per word, any word.
    assert tokenizer.character_ids(["The cat"]).shape == (1, 2, 50)
    ```
    """

    asset_files = {"vocabulary": "vocab.txt"}

    def __init__(self, vocabulary=None, **kwargs):
        super().__init__(**kwargs)
        self.set_assets(vocabulary=vocabulary)

    def read_assets(self, vocabulary):
        words = read_lines_asset(vocabulary)
        missing = [t for t in SPECIAL_TOKENS if t not in set(words)]
        if missing:
            raise TokenizerAssetError(
                f"ElmoTokenizer: vocabulary={str(vocabulary)!r} lacks "
                f"{missing}; an ELMo vocabulary holds {list(SPECIAL_TOKENS)} "
                "and one word per line.")
        if len(set(words)) != len(words) or "" in words:
            raise TokenizerAssetError(
                f"ElmoTokenizer: vocabulary={str(vocabulary)!r} has repeated "
                "or empty lines; it must hold one distinct word per line.")
        return WordVocabulary(words, unk_token=UNK_TOKEN)

    def split(self, texts):
        """Texts -> words (tf, ragged for a batch)."""
        return split_words(texts)

    def character_ids(self, texts):
        """Texts -> the original's character ids of each word:
        `(batch, max words, 50)` int32, padding words all 0."""
        words = split_words(tf.convert_to_tensor(texts, tf.string))
        if isinstance(words, tf.RaggedTensor):
            ids = tf.ragged.map_flat_values(character_ids_tf, words)
            return ids.to_tensor(0)
        return character_ids_tf(words)

    @property
    def bos_token_id(self):
        return self.token_to_id(BOS_TOKEN)

    @property
    def eos_token_id(self):
        return self.token_to_id(EOS_TOKEN)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK_TOKEN)
