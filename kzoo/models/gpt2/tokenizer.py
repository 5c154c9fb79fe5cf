"""GPT-2's byte-level BPE tokenizer (keras-hub `BytePairTokenizer`)."""

import keras_hub
from tokenizers import pre_tokenizers

from kzoo.models.registry import register
from kzoo.models.tokenizer import (Tokenizer, TokenizerAssetError,
                                   read_json_asset, read_lines_asset)

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
        (Both None when the files come later: `keras.saving.load_model`.)

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

    def __init__(self, vocabulary=None, merges=None, **kwargs):
        super().__init__(**kwargs)
        self.set_assets(vocabulary=vocabulary, merges=merges)

    def read_assets(self, vocabulary, merges):
        vocab = read_json_asset(vocabulary)
        if not isinstance(vocab, dict) or not vocab or not all(
                isinstance(k, str) and isinstance(v, int)
                for k, v in vocab.items()):
            raise TokenizerAssetError(
                f"GPT2Tokenizer: vocabulary={str(vocabulary)!r} is not a "
                "vocab.json: that is a non-empty JSON object mapping each "
                "token to its id.")
        if END_OF_TEXT not in vocab:
            raise TokenizerAssetError(
                f"Vocabulary {vocabulary} lacks GPT-2's special token "
                f"{END_OF_TEXT!r}.")
        rules = read_lines_asset(merges)
        for number, rule in enumerate(rules, start=1):
            if not rule.lstrip().startswith("#version:") and \
                    len(rule.split(" ")) != 2:
                raise TokenizerAssetError(
                    f"GPT2Tokenizer: merges={str(merges)!r}, line {number}: "
                    f"{rule[:40]!r} is not a merge rule (two tokens and one "
                    "space); the file is corrupt or not a merges.txt.")
        return _GPT2BytePairTokenizer(
            vocabulary=vocab,
            merges=rules,
            unsplittable_tokens=[END_OF_TEXT],
            dtype="int32",
        )

    @property
    def end_token_id(self):
        return self.token_to_id(END_OF_TEXT)

    @property
    def start_token_id(self):
        return self.end_token_id

    @property
    def pad_token_id(self):
        # GPT-2 has no padding token; padding is masked out, so any id
        # serves, and <|endoftext|> is the conventional choice.
        return self.end_token_id

    @property
    def special_token_ids(self):
        return [self.end_token_id]
