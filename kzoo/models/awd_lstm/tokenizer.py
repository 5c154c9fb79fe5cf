"""ULMFiT's word tokenizer: fastai's special tokens and its case rules over
a word vocabulary."""

import collections

import tensorflow as tf

from kzoo.preprocessing.word_vocabulary import WordVocabulary
from kzoo.core.registry import register
from kzoo.core.tokenizer import (Tokenizer, TokenizerAssetError,
                                   read_lines_asset)

# fastai's special tokens, in its order (`defaults.text_spec_tok`): a
# vocabulary fastai makes starts with them, so xxunk is 0 and xxpad 1.
UNK, PAD, BOS, EOS, FLD = "xxunk", "xxpad", "xxbos", "xxeos", "xxfld"
REP, WREP, UP, MAJ = "xxrep", "xxwrep", "xxup", "xxmaj"
SPECIAL_TOKENS = (UNK, PAD, BOS, EOS, FLD, REP, WREP, UP, MAJ)
REQUIRED_TOKENS = (UNK, PAD, BOS)

# Punctuation and symbols become words of their own; an apostrophe stays
# inside its word.
_SPLIT = r"([^\pL\pN\s'])"
# str.isupper(), for a word: some upper-case letter, no lower-case one.
_ALL_CAPS = r"[^\p{Ll}]*\p{Lu}[^\p{Ll}]*"
_CAPITALISED = r"\p{Lu}.*"


def apply_rules(texts):
    """fastai's default rules that kzoo implements, in tf string ops (so
    they run in `tf.data`): punctuation split off as words; a word in
    capitals (two characters or more) becomes `xxup word`; a capitalised
    one `xxmaj word`; every word lower-cased. Returns the words joined by
    single spaces."""
    texts = tf.convert_to_tensor(texts, tf.string)
    if texts.shape.rank == 0:  # one text
        return apply_rules(texts[tf.newaxis])[0]
    texts = tf.strings.regex_replace(texts, _SPLIT, r" \1 ")
    words = tf.strings.split(texts)
    flat = words.flat_values
    lower = tf.strings.lower(flat, encoding="utf-8")
    long_enough = tf.strings.length(flat, unit="UTF8_CHAR") > 1
    all_caps = tf.strings.regex_full_match(flat, _ALL_CAPS) & long_enough
    capitalised = tf.strings.regex_full_match(flat, _CAPITALISED) & \
        long_enough & ~all_caps
    marked = tf.where(all_caps, UP + " " + lower,
                      tf.where(capitalised, MAJ + " " + lower, lower))
    return tf.strings.reduce_join(words.with_flat_values(marked), axis=-1,
                                  separator=" ")


@register
class AwdLstmTokenizer(Tokenizer):
    """Word-level tokenisation for AWD-LSTM / ULMFiT, with fastai's special
    tokens (`xxunk`, `xxpad`, `xxbos`, `xxeos`, `xxfld`, `xxrep`,
    `xxwrep`, `xxup`, `xxmaj`).

    What kzoo implements of fastai's default processing (`rules=True`):
    punctuation split from words (a regular expression; fastai uses
    spaCy's English tokenizer, which also splits "don't" into "do n't"),
    `xxup` before a word in capitals, `xxmaj` before a capitalised word,
    and lower-casing. Not implemented: `fix_html`, `xxrep`/`xxwrep` for
    repeated characters and words, spaCy's special cases. With
    `rules=False` the text is split on whitespace only (pre-tokenised
    text, e.g. fastai's own output).

    Words outside the vocabulary are `xxunk`. `AwdLstmPreprocessor` puts
    `xxbos` before each text.

    Args:
        vocabulary: a word list, one token per line (id = line), holding
            `xxunk`, `xxpad` and `xxbos` (fastai's `itos`; see
            `kzoo.models.awd_lstm.convert.write_vocabulary` for its `.pkl`).
        rules: apply the rules above before the lookup.

    Example:
    ```python
    from kzoo.models.awd_lstm.tokenizer import build_vocabulary
    build_vocabulary(["The BBC said so.", "The cat sat."], "vocab.txt",
                     min_count=1)   # or a released model's itos
    tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
    assert tokenizer.split(["The BBC said so."]).to_list() == [
        [b"xxmaj", b"the", b"xxup", b"bbc", b"said", b"so", b"."]]
    ids = tokenizer(["The cat barked."])[0]
    assert [tokenizer.id_to_token(i) for i in ids] == [
        "xxmaj", "the", "cat", "xxunk", "."]   # "barked": not in it
    ```
    """

    asset_files = {"vocabulary": "vocab.txt"}

    def __init__(self, vocabulary=None, rules=True, **kwargs):
        super().__init__(**kwargs)
        self.rules = bool(rules)
        self.set_assets(vocabulary=vocabulary)

    def read_assets(self, vocabulary):
        words = read_lines_asset(vocabulary)
        missing = [t for t in REQUIRED_TOKENS if t not in set(words)]
        if missing:
            raise TokenizerAssetError(
                f"AwdLstmTokenizer: vocabulary={str(vocabulary)!r} lacks "
                f"{missing}; a fastai vocabulary starts with "
                f"{list(SPECIAL_TOKENS)} and holds one token per line.")
        if len(set(words)) != len(words) or "" in words:
            raise TokenizerAssetError(
                f"AwdLstmTokenizer: vocabulary={str(vocabulary)!r} has "
                "repeated or empty lines; it must hold one distinct token "
                "per line.")
        return WordVocabulary(words, unk_token=UNK)

    def normalize(self, texts):
        return apply_rules(texts) if self.rules else texts

    def split(self, texts):
        """Texts -> tokens (tf strings, ragged for a batch), rules
        applied."""
        texts = tf.convert_to_tensor(texts, tf.string)
        return tf.strings.split(self.normalize(texts))

    def get_config(self):
        return {**super().get_config(), "rules": self.rules}

    @property
    def pad_token_id(self):
        return self.token_to_id(PAD)

    @property
    def bos_token_id(self):
        return self.token_to_id(BOS)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK)


def build_vocabulary(texts, path, max_size=60000, min_count=2, rules=True):
    """Write a fastai-style vocabulary for `texts` to `path`: the special
    tokens first, then the words seen at least `min_count` times, most
    frequent first (ties alphabetically), up to `max_size` tokens in all
    (fastai's `make_vocab`: min_freq 3, max 60,000). Returns the tokens.

    Example:
    ```python
    build_vocabulary(texts, "vocab.txt", max_size=8000)
    tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
    ```
    """
    counts = collections.Counter()
    normalize = apply_rules if rules else (lambda t: t)
    batch = 256
    for start in range(0, len(texts), batch):
        joined = normalize(tf.constant(list(texts[start:start + batch])))
        for row in tf.strings.split(joined).to_list():
            counts.update(w.decode("utf-8") for w in row)
    words = sorted((w for w, n in counts.items()
                    if n >= min_count and w not in SPECIAL_TOKENS),
                   key=lambda w: (-counts[w], w))
    tokens = list(SPECIAL_TOKENS) + words[:max(0, max_size -
                                               len(SPECIAL_TOKENS))]
    with open(path, "w", encoding="utf-8") as f:
        f.write("".join(t + "\n" for t in tokens))
    return tokens
