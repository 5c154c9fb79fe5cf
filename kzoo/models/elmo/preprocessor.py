"""ELMo's input packing: `<S>` words `</S>`, as character ids."""

import tensorflow as tf

from kzoo.models.elmo.characters import BOS_TOKEN, EOS_TOKEN, character_ids_tf
from kzoo.models.elmo.tokenizer import ElmoTokenizer
from kzoo.models.registry import register
from kzoo.models.preprocessor import Preprocessor


def pack_words(words, sequence_length):
    """Ragged words -> `(words, padding_mask)` dense
    `(batch, sequence_length)`: `<S>`, at most `sequence_length - 2`
    words, `</S>`, then padding (the empty string, mask 0)."""
    words = words[:, :sequence_length - 2]
    rows = words.nrows()
    bos = tf.fill(tf.stack([rows, 1]), BOS_TOKEN)
    eos = tf.fill(tf.stack([rows, 1]), EOS_TOKEN)
    packed = tf.concat([tf.RaggedTensor.from_tensor(bos), words,
                        tf.RaggedTensor.from_tensor(eos)], axis=1)
    mask = tf.ones_like(packed, tf.int32)
    shape = tf.stack([rows, sequence_length])
    dense = packed.to_tensor("", shape=shape)
    return dense, mask.to_tensor(0, shape=shape)


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
    preprocessor = kzoo.ElmoPreprocessor.from_preset(
        "elmo_small_en", sequence_length=16)
    x = preprocessor(["The cat sat on the mat ."])
    x["character_ids"].shape  # (1, 16, 50)
    ```
    """

    tokenizer_cls = ElmoTokenizer

    def __init__(self, tokenizer, sequence_length=64, **kwargs):
        super().__init__(tokenizer, sequence_length, **kwargs)

    def special_token_count(self, num_segments):
        return 2  # <S>, </S>

    def pack_words(self, x):
        """Texts -> dense words `(batch, sequence_length)` and the mask."""
        texts = x if x.shape.rank else x[tf.newaxis]
        return pack_words(self.tokenizer.split(texts), self.sequence_length)

    def _pack(self, x):
        words, padding_mask = self.pack_words(x)
        character_ids = character_ids_tf(words)
        character_ids *= padding_mask[..., tf.newaxis]  # padding tokens: 0
        return {"character_ids": character_ids, "padding_mask": padding_mask}
