"""GPT-2's byte-level BPE tokenizer (keras-hub `BytePairTokenizer`)."""

import keras_hub
from tokenizers import pre_tokenizers

from kzoo.models.registry import register
from kzoo.models.tokenizer import Tokenizer

END_OF_TEXT = "<|endoftext|>"


class _GPT2BytePairTokenizer(keras_hub.tokenizers.BytePairTokenizer):
    """keras-hub's BytePairTokenizer, with GPT-2's own pre-tokenizer on the
    eager (Python) path.

    keras-hub runs two implementations: TensorFlow ops inside `tf.data` /
    `tf.function`, and the Hugging Face `tokenizers` library when called
    eagerly. The eager path splits words with Llama 3's pattern, which
    differs from GPT-2's on contractions after a space (`" 'told"` becomes
    `" "`, `"'t"`, `"old"` instead of `" '"`, `"told"`). GPT-2's pattern is
    what `tokenizers`' `ByteLevel(use_regex=True)` implements, so the eager
    path uses that. Both paths pass the 46 llama.cpp golden cases.
    """

    def _set_vocabulary_and_merges_tokenizers(self, vocabulary, merges):
        super()._set_vocabulary_and_merges_tokenizers(vocabulary, merges)
        self._tokenizer.pre_tokenizer = pre_tokenizers.ByteLevel(
            add_prefix_space=self.add_prefix_space, use_regex=True)


@register
class GPT2Tokenizer(Tokenizer):
    """Byte-level BPE with GPT-2's vocabulary and its one special token,
    `<|endoftext|>` (id 50256), which marks document boundaries and serves
    as start, end and padding token.

    Args:
        vocabulary: path to `vocab.json` (token -> id; OpenAI's
            `encoder.json`).
        merges: path to `merges.txt` (OpenAI's `vocab.bpe`).

    `tokenize` adds no special tokens (the preprocessors do); a literal
    `<|endoftext|>` in the text maps to its id. Runs eagerly and inside
    `tf.data`, with the same ids either way.

    Example:
    ```python
    tokenizer = kzoo.GPT2Tokenizer.from_preset("gpt2")
    tokenizer("Hello world")            # [15496, 995]
    tokenizer.detokenize([15496, 995])  # "Hello world"
    ```
    """

    asset_files = {"vocabulary": "vocab.json", "merges": "merges.txt"}

    def __init__(self, vocabulary, merges, **kwargs):
        super().__init__(**kwargs)
        self.vocabulary = str(vocabulary)
        self.merges = str(merges)
        self.inner = _GPT2BytePairTokenizer(
            vocabulary=self.vocabulary,
            merges=self.merges,
            unsplittable_tokens=[END_OF_TEXT],
            dtype="int32",
        )
        if END_OF_TEXT not in self.inner.vocabulary:
            raise ValueError(
                f"Vocabulary {self.vocabulary} lacks GPT-2's special token "
                f"{END_OF_TEXT!r}.")
        self.end_token_id = self.token_to_id(END_OF_TEXT)
        # GPT-2 has no padding token; padding is masked out, so any id
        # serves, and <|endoftext|> is the conventional choice.
        self.start_token_id = self.end_token_id
        self.pad_token_id = self.end_token_id

    @property
    def special_token_ids(self):
        return [self.end_token_id]

    def get_config(self):
        config = super().get_config()
        config.update({"vocabulary": self.vocabulary, "merges": self.merges})
        return config
