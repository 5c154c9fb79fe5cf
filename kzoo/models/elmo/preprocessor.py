"""ELMo's input packing: `<S>` words `</S>`, as character ids."""

import tensorflow as tf

from kzoo.models.elmo.characters import BOS_TOKEN, EOS_TOKEN, character_ids_tf
from kzoo.models.elmo.tokenizer import ElmoTokenizer
from kzoo.core.registry import register
from kzoo.core.preprocessor import Preprocessor


def pack_rows(rows, sequence_length, start, end, pad):
    """Ragged rows -> `(packed, padding_mask)` dense
    `(batch, sequence_length)`: `start`, at most `sequence_length - 2`
    values, `end`, then `pad` (mask 0). Words and their labels are packed
    alike, so each label stays on its word."""
    rows = rows[:, :sequence_length - 2]
    count = rows.nrows()
    column = lambda value: tf.RaggedTensor.from_tensor(  # noqa: E731
        tf.fill(tf.stack([count, 1]), tf.constant(value, rows.dtype)),
        row_splits_dtype=rows.row_splits.dtype)
    packed = tf.concat([column(start), rows, column(end)], axis=1)
    mask = tf.ones_like(packed, tf.int32)
    shape = tf.stack([count, sequence_length])
    dense = packed.to_tensor(tf.constant(pad, rows.dtype), shape=shape)
    return dense, mask.to_tensor(0, shape=shape)


def pack_words(words, sequence_length):
    """Ragged words -> `(words, padding_mask)` dense
    `(batch, sequence_length)`: `<S>`, at most `sequence_length - 2`
    words, `</S>`, then padding (the empty string, mask 0)."""
    return pack_rows(words, sequence_length, BOS_TOKEN, EOS_TOKEN, "")


def backbone_inputs(words, padding_mask):
    """Packed words -> `ElmoBackbone`'s inputs; a padding token's 50
    character ids are all 0."""
    character_ids = character_ids_tf(words)
    character_ids *= padding_mask[..., tf.newaxis]
    return {"character_ids": character_ids, "padding_mask": padding_mask}


@register
class ElmoPreprocessor(Preprocessor):
    """Raw text -> `character_ids`, `padding_mask` for `ElmoBackbone`:
    whitespace tokenisation (or pre-tokenised text: words joined by
    spaces), `<S>` and `</S>` added around each text, truncated and padded
    to `sequence_length` tokens. A padding token's 50 character ids are
    all 0.

    Args:
        tokenizer: an `ElmoTokenizer`.
        sequence_length: tokens per example, `<S>` and `</S>` included
            (at least 2).

    Example:
    ```python
    # elmo_small_en's vocabulary comes with its weights (downloaded
    # once); offline, a word list of our own:
    words = ["<S>", "</S>", "<UNK>", "the", "cat", "sat", "."]
    with open("vocab.txt", "w") as f:
        f.write("\\n".join(words))
    tokenizer = kzoo.ElmoTokenizer("vocab.txt")
    preprocessor = kzoo.ElmoPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor(["The cat sat on the mat ."])
    assert x["character_ids"].shape == (1, 16, 50)
    assert np.asarray(x["padding_mask"]).sum() == 9   # <S> 7 words </S>
    ```
    """

    tokenizer_cls = ElmoTokenizer

    def __init__(self, tokenizer, sequence_length=64, **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)

    def special_token_count(self, num_segments):
        return 2  # <S>, </S>

    def pack_words(self, x):
        """Texts -> dense words `(batch, sequence_length)` and the mask
        (`(sequence_length,)` for one text, as `dataset.map` before
        `batch` gives it)."""
        texts = x if x.shape.rank else x[tf.newaxis]
        words, mask = pack_words(self.tokenizer.split(texts),
                                 self.sequence_length)
        if not x.shape.rank:
            return words[0], mask[0]
        return words, mask

    def _pack(self, x):
        return backbone_inputs(*self.pack_words(x))
