"""AWD-LSTM's input packing: `xxbos` and the words, right-padded."""

import tensorflow as tf

from kzoo.models.awd_lstm.tokenizer import AwdLstmTokenizer
from kzoo.core.preprocessor import PAD_MARK, Preprocessor, split_padding
from kzoo.core.registry import register


def unbatch_if_one(x, packed):
    """One text in (an unbatched `tf.data` element): its rows out, without
    the batch axis `pack_ids` added."""
    if x.shape.rank:
        return packed
    return tf.nest.map_structure(lambda t: t[0], packed)


@register
class AwdLstmPreprocessor(Preprocessor):
    """Raw text -> `token_ids`, `padding_mask` for `AwdLstmBackbone`:
    `xxbos` then the text's tokens (`AwdLstmTokenizer`), truncated to
    `sequence_length` and right-padded with `xxpad` (mask 0).

    fastai pads classifier batches at the front; kzoo pads at the end and
    masks the padding exactly, so where the padding sits changes nothing.

    Args:
        tokenizer: an `AwdLstmTokenizer`.
        sequence_length: tokens per example, `xxbos` included.

    Example:
    ```python
    from kzoo import datasets
    from kzoo.models.awd_lstm.tokenizer import build_vocabulary
    texts = datasets.austen_passages("emma", words=20)[:16]
    build_vocabulary(texts, "vocab.txt", max_size=200)  # fastai's layout
    tokenizer = kzoo.AwdLstmTokenizer(vocabulary="vocab.txt")
    preprocessor = kzoo.AwdLstmPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor(["It is a truth universally acknowledged."])
    assert x["token_ids"][0][0] == tokenizer.bos_token_id   # xxbos first
    ```
    """

    tokenizer_cls = AwdLstmTokenizer

    def __init__(self, tokenizer, sequence_length=72, **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)

    def special_token_count(self, num_segments):
        return 1  # xxbos

    def setup(self):
        self.pad_id = self.tokenizer.pad_token_id
        self.bos_id = self.tokenizer.bos_token_id

    def pack_ids(self, x, length):
        """Texts -> `(token_ids, padding_mask)`, `(batch, length)`."""
        texts = x if x.shape.rank else x[tf.newaxis]
        ids = self.tokenizer.tokenize_tf(texts)  # ragged (batch, words)
        bos = tf.fill(tf.stack([ids.nrows(), 1]), self.bos_id)
        ids = tf.concat([tf.RaggedTensor.from_tensor(
            tf.cast(bos, ids.dtype), row_splits_dtype=ids.row_splits.dtype),
            ids], axis=1)[:, :length]
        packed = ids.to_tensor(PAD_MARK, shape=tf.stack([ids.nrows(),
                                                         length]))
        return split_padding(packed, self.pad_id)

    def _pack(self, x):
        token_ids, padding_mask = self.pack_ids(x, self.sequence_length)
        packed = {"token_ids": token_ids, "padding_mask": padding_mask}
        return unbatch_if_one(x, packed)


@register
class AwdLstmLanguageModelPreprocessor(AwdLstmPreprocessor):
    """Raw text -> x (`token_ids`, `padding_mask` of `sequence_length`
    tokens), y (each position's next token) and sample weights (1 where
    that next token is real). Makes its own labels: pass texts only.

    For a corpus, feed windows of it of at most `sequence_length` tokens
    (not words: punctuation and `xxmaj` are tokens too), as
    `kzoo.recipes.ulmfit.corpus_windows` cuts them; each window starts
    with `xxbos` and from zero LSTM state.

    Example:
    ```python
    # Setup: the example of kzoo.AwdLstmPreprocessor (tokenizer).
    preprocessor = kzoo.AwdLstmLanguageModelPreprocessor(
        tokenizer, sequence_length=8)
    x, y, sample_weight = preprocessor(["The cat sat on the mat."])
    # y: each position's next token.
    assert (np.asarray(y)[0, :-1] == np.asarray(x["token_ids"])[0, 1:]).all()
    ```
    """

    takes_labels = False

    def call(self, x, y=None, sample_weight=None):
        token_ids, padding_mask = self.pack_ids(x, self.sequence_length + 1)
        inputs = {"token_ids": token_ids[:, :-1],
                  "padding_mask": padding_mask[:, :-1]}
        return unbatch_if_one(x, (inputs, token_ids[:, 1:],
                                  tf.cast(padding_mask[:, 1:], "float32")))
