"""ELMo's character ids: the original's mapping, in tf (for `tf.data`) and
NumPy.

Every token is 50 ids: begin-of-word, the token's UTF-8 bytes (at most 48,
cut at the byte), end-of-word, then the padding character; each id is the
byte value (or marker) plus one, so that 0 is free for padding *tokens*
(all 50 ids 0). The sentence boundaries `<S>` and `</S>` are not spelled
out: each is begin-of-word, one special character (256 / 257),
end-of-word. These are the facts of bilm-tf's `UnicodeCharsVocabulary`
(and allennlp's `ELMoCharacterMapper`), which the released weights were
trained on.
"""

import numpy as np
import tensorflow as tf

CHARACTERS_PER_TOKEN = 50
BOS_CHARACTER = 256   # the character of <S>
EOS_CHARACTER = 257   # the character of </S>
BOW_CHARACTER = 258   # begin of word
EOW_CHARACTER = 259   # end of word
PAD_CHARACTER = 260   # after the end of word
BOS_TOKEN, EOS_TOKEN = "<S>", "</S>"
MAX_BYTES = CHARACTERS_PER_TOKEN - 2


def _marker_token(character):
    ids = np.full(CHARACTERS_PER_TOKEN, PAD_CHARACTER, "int32")
    ids[:3] = (BOW_CHARACTER, character, EOW_CHARACTER)
    return ids + 1


BOS_IDS = _marker_token(BOS_CHARACTER)
EOS_IDS = _marker_token(EOS_CHARACTER)


def word_character_ids(word):
    """One token (str) -> its 50 ids (NumPy), as the original maps it."""
    if word == BOS_TOKEN:
        return BOS_IDS.copy()
    if word == EOS_TOKEN:
        return EOS_IDS.copy()
    data = word.encode("utf-8", "ignore")[:MAX_BYTES]
    ids = np.full(CHARACTERS_PER_TOKEN, PAD_CHARACTER, "int32")
    ids[0] = BOW_CHARACTER
    ids[1:len(data) + 1] = list(data)
    ids[len(data) + 1] = EOW_CHARACTER
    return ids + 1


def character_ids_tf(words):
    """A tf string tensor of tokens, any shape `S` -> int32 ids
    `S + (50,)`, the same as `word_character_ids` on each token."""
    words = tf.convert_to_tensor(words, tf.string)
    data = tf.cast(tf.io.decode_raw(words, tf.uint8, fixed_length=MAX_BYTES),
                   tf.int32)  # bytes, cut or zero-filled to 48
    length = tf.minimum(tf.strings.length(words), MAX_BYTES)[..., None]
    position = tf.range(CHARACTERS_PER_TOKEN)  # (50,)
    ids = tf.fill(tf.shape(position) + 0, PAD_CHARACTER)
    ids = tf.where(position == length + 1, EOW_CHARACTER, ids)
    padded = tf.pad(data, [[0, 0]] * (data.shape.rank - 1) + [[1, 1]])
    ids = tf.where((position >= 1) & (position <= length), padded, ids)
    ids = tf.where(position == 0, BOW_CHARACTER, ids)
    ids = tf.where((words == BOS_TOKEN)[..., None], BOS_IDS - 1, ids)
    ids = tf.where((words == EOS_TOKEN)[..., None], EOS_IDS - 1, ids)
    return ids + 1
