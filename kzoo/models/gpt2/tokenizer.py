"""GPT-2's byte-level BPE tokenizer: keras-hub's `BytePairTokenizer`
eagerly, kzoo's BPE graph (kzoo.preprocessing.byte_pair) in TensorFlow
graphs."""

import keras_hub
import numpy as np
import tensorflow as tf
from tokenizers import pre_tokenizers

from kzoo.core.registry import register
from kzoo.core.shared_hub_tokenizers import (asset_key,
                                               shared_hub_tokenizer)
from kzoo.core.tokenizer import (Tokenizer, TokenizerAssetError,
                                   read_json_asset, read_lines_asset)
from kzoo.preprocessing.byte_pair import BytePairGraph
from kzoo.utils import private_apis

END_OF_TEXT = "<|endoftext|>"
# Byte-level BPE spells bytes 0x00 and 0x01 as these characters.
_NUL_TOKEN, _SOH_TOKEN = "\u0100", "\u0101"
# ... and the space byte (0x20) as this one.
_SPACE_SYMBOL = "\u0120"
# Asset files already checked, by `read_assets`' key (their contents and
# the special tokens) -> whether NUL has a stand-in. Reading and checking
# GPT-2's 50k-entry files took 60 ms per tokenizer (6 ms now), and a
# program builds one per `from_preset` of a preset's tokenizer,
# preprocessor and task.
_CHECKED = {}
# keras-hub's private hook that `_GPT2BytePairTokenizer` overrides.
_EAGER_HOOK = \
    "keras-hub:BytePairTokenizer._set_vocabulary_and_merges_tokenizers"


class _GPT2BytePairTokenizer(keras_hub.tokenizers.BytePairTokenizer):
    """keras-hub's BytePairTokenizer, with GPT-2's own pre-tokenizer on the
    eager (Python) path, and kzoo's graph (`byte_pair_graph`) for
    TensorFlow graphs.

    keras-hub runs two implementations: TensorFlow ops inside `tf.data` /
    `tf.function`, and the Hugging Face `tokenizers` library when called
    eagerly. The eager path splits words with Llama 3's pattern, which
    differs from GPT-2's on contractions after a space (`" 'told"` becomes
    `" "`, `"'t"`, `"old"` instead of `" '"`, `"told"`). GPT-2's pattern is
    what `tokenizers`' `ByteLevel(use_regex=True)` implements, so the eager
    path uses that. Both paths pass the 46 llama.cpp golden cases.

    The hook and `_tokenizer` are keras-hub's private names (checked on
    keras-hub 0.32.0; kzoo/utils/private_apis.py): without them
    `GPT2Tokenizer` tokenizes eagerly through the TensorFlow path instead.
    """

    def __init__(self, vocabulary, merges, unsplittable_tokens, **kwargs):
        super().__init__(vocabulary=vocabulary, merges=merges,
                         unsplittable_tokens=unsplittable_tokens, **kwargs)
        # Made with the tokenizer (20 ms), not on first use: an export
        # finds its tables here before it traces (kzoo.core.export).
        self.byte_pair_graph = BytePairGraph(
            vocabulary, merges, unsplittable_tokens,
            add_prefix_space=self.add_prefix_space)

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
    assert np.asarray(tokenizer("Hello world")).tolist() == [15496, 995]
    assert tokenizer.detokenize([15496, 995]) == "Hello world"
    ```
    """

    asset_files = {"vocabulary": "vocab.json", "merges": "merges.txt"}
    # Tokens the vocabulary must hold and a text never splits (typed in a
    # text, each is its id). Byte-level BPE families built on this one
    # (RoBERTa) name their own.
    special_tokens = (END_OF_TEXT,)
    # What `kzoo train-tokenizer` trains for the family: byte-level BPE,
    # the 256 byte tokens and the merges, then <|endoftext|> last, where
    # GPT-2's own vocabulary has it (50256).
    vocabulary_kinds = ("byte-level-bpe",)
    trained_layout = {"first": (), "last": (END_OF_TEXT,)}
    # One trace of the BPE graph per vocabulary, shared by every pipeline
    # (~0.1 s each otherwise).
    trace_once = True
    byte_level = True

    def __init__(self, vocabulary=None, merges=None, **kwargs):
        super().__init__(**kwargs)
        self._nul_stand_in = False  # see tokenize_tf; set by read_assets
        self.set_assets(vocabulary=vocabulary, merges=merges)

    def read_assets(self, vocabulary, merges):
        key = ("byte_pair", self.special_tokens,
               asset_key(vocabulary, merges))
        files = None
        if key not in _CHECKED:
            files = self._read(vocabulary, merges)
            _CHECKED[key] = self._check(*files, vocabulary, merges)
        self._nul_stand_in = _CHECKED[key]

        def build():
            vocab, rules = files or self._read(vocabulary, merges)
            return _GPT2BytePairTokenizer(
                vocabulary=vocab, merges=rules,
                unsplittable_tokens=list(self.special_tokens), dtype="int32")
        return shared_hub_tokenizer(key, build)

    @staticmethod
    def _read(vocabulary, merges):
        return read_json_asset(vocabulary), read_lines_asset(merges)

    def _check(self, vocab, rules, vocabulary, merges):
        """Refuse files that are not a vocab.json and a merges.txt with
        this class's special tokens; return whether NUL has a stand-in in
        tf graphs (see `_tokenize_tf`)."""
        name = type(self).__name__
        if not isinstance(vocab, dict) or not vocab or not all(
                isinstance(k, str) and isinstance(v, int)
                for k, v in vocab.items()):
            raise TokenizerAssetError(
                f"{name}: vocabulary={str(vocabulary)!r} is not a "
                "vocab.json: that is a non-empty JSON object mapping each "
                "token to its id.")
        missing = [t for t in self.special_tokens if t not in vocab]
        if missing:
            raise TokenizerAssetError(
                f"Vocabulary {vocabulary} lacks {name}'s special token"
                f"{'s' if len(missing) > 1 else ''} "
                f"{', '.join(map(repr, missing))}.")
        if not any(rule and not rule.startswith("#version:")
                   for rule in rules):
            raise TokenizerAssetError(
                f"{name}: merges={str(merges)!r} holds no merge "
                "rules; the file is empty or not a merges.txt.")
        for number, rule in enumerate(rules, start=1):
            if not rule.lstrip().startswith("#version:") and \
                    len(rule.split(" ")) != 2:
                raise TokenizerAssetError(
                    f"{name}: merges={str(merges)!r}, line {number}: "
                    f"{rule[:40]!r} is not a merge rule (two tokens and one "
                    "space); the file is corrupt or not a merges.txt.")
        # NUL needs a stand-in in tf graphs, which is exact when neither
        # byte takes part in a merge (true of GPT-2's merges).
        return all(
            _NUL_TOKEN not in rule and _SOH_TOKEN not in rule
            for rule in rules) and _NUL_TOKEN in vocab and _SOH_TOKEN in vocab

    def _tokenize_tf(self, texts):
        """As the base class eagerly; in a tf graph, kzoo's byte-level BPE
        graph (`kzoo.preprocessing.byte_pair`), with NUL characters
        handled.

        The graph splits text at NUL characters internally, so none may
        reach it. In graphs, NUL is tokenized as SOH (\\x01, the same
        kind of character to the pre-tokenizer's regex), then those SOH
        tokens that stood for a NUL get NUL's id back, in text order.
        Eager calls run the `tokenizers` library, which is fine.
        """
        if tf.executing_eagerly() and not private_apis.has(_EAGER_HOOK):
            return self.tokenize_in_graph(texts)
        if tf.executing_eagerly():
            return super()._tokenize_tf(texts)
        if isinstance(texts, tf.RaggedTensor):
            return texts.with_flat_values(self._tokenize_tf(texts.flat_values))
        unbatched = texts.shape.rank == 0
        batch = self.normalize(texts[tf.newaxis] if unbatched else texts)
        graph = self._hub().byte_pair_graph
        if not self._nul_stand_in:
            tf.debugging.Assert(
                tf.reduce_all(tf.strings.regex_full_match(batch, "[^\\x00]*")),
                ["GPT2Tokenizer: inside tf.data this vocabulary cannot "
                 "tokenize NUL (\\x00) characters; remove them first."])
            ids = graph.tokenize(batch)
        else:
            ids = graph.tokenize(
                tf.strings.regex_replace(batch, "\\x00", "\x01"))
            ids = self._restore_nul(batch, ids)
        return ids[0] if unbatched else ids

    def tokenize_in_graph(self, texts):
        """Eager tf strings -> tf ids through the TensorFlow graph (the
        one `tf.data` runs), in the function traced once per
        tokenizer: what eager calls run when keras-hub lacks the hook that
        fixes its eager path's pre-tokenizer (slower; the same ids)."""
        traced = self.traced_tokenize_tf()
        if isinstance(texts, tf.RaggedTensor):
            return texts.with_flat_values(traced(texts.flat_values))
        if texts.shape.rank == 0:
            return traced(texts[tf.newaxis])[0]
        return traced(texts)

    def _restore_nul(self, texts, ids):
        soh_id = self.token_to_id(_SOH_TOKEN)
        nul_id = self.token_to_id(_NUL_TOKEN)
        # Each text's NUL and SOH characters, in order: one SOH token each.
        controls = tf.strings.bytes_split(
            tf.strings.regex_replace(texts, "[^\\x00\\x01]", ""))
        was_nul = tf.equal(controls.flat_values, "\x00")
        flat = ids.flat_values
        positions = tf.where(tf.equal(flat, soh_id))
        flat = tf.tensor_scatter_nd_update(
            flat, positions, tf.where(was_nul, nul_id, soh_id))
        return ids.with_flat_values(flat)

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

    def word_start_table(self):
        """True for tokens that begin a word: byte-level BPE spells a space
        before a word as "Ġ" at the start of its first token (fairseq's
        `is_beginning_of_word`: the decoded token starts with a space).
        Special tokens begin words too, so a word straight after `<s>`
        begins one whatever its spelling (as in fairseq)."""
        table = np.zeros(self.vocabulary_size, dtype=bool)
        for token, token_id in self._hub().vocabulary.items():
            if 0 <= token_id < len(table):
                table[token_id] = token.startswith(_SPACE_SYMBOL)
        table[self.special_token_ids] = True
        return table
