"""A word-level vocabulary in tf ops (ELMo's and AWD-LSTM's tokenizers)."""

import tensorflow as tf


def split_words(texts):
    """Whitespace tokenisation, as the original's `sentence.split()` on
    pre-tokenised text: a tf string (batch) -> tf words (ragged)."""
    return tf.strings.split(texts)


class WordVocabulary:
    """Words <-> ids through a word list (id = line), unknown words
    `unk_token` (ELMo's `<UNK>`; AWD-LSTM's `xxunk`). The text algorithm
    behind `ElmoTokenizer` and `AwdLstmTokenizer`, in tf ops, so it runs in
    `tf.data`."""

    def __init__(self, words, unk_token):
        self.words = list(words)
        self._words = tf.constant(self.words)
        self.unk_id = self.words.index(unk_token)
        self._table = tf.lookup.StaticHashTable(
            tf.lookup.KeyValueTensorInitializer(
                self._words, tf.range(len(self.words), dtype=tf.int32)),
            default_value=self.unk_id)

    def lookup(self, words):
        if isinstance(words, tf.RaggedTensor):
            return tf.ragged.map_flat_values(self._table.lookup, words)
        return self._table.lookup(words)

    def tokenize(self, texts):
        return self.lookup(split_words(texts))

    def detokenize(self, ids):
        if isinstance(ids, (list, tuple)) and ids and isinstance(
                ids[0], (list, tuple)):
            ids = tf.ragged.constant(ids, tf.int32)  # ragged rows
        elif not isinstance(ids, tf.RaggedTensor):
            ids = tf.convert_to_tensor(ids)
        if isinstance(ids, tf.RaggedTensor):
            words = tf.ragged.map_flat_values(
                lambda i: tf.gather(self._words, i), ids)
        else:
            words = tf.gather(self._words, ids)
        return tf.strings.reduce_join(words, axis=-1, separator=" ")

    def vocabulary_size(self):
        return len(self.words)

    def get_vocabulary(self):
        return list(self.words)

    def token_to_id(self, token):
        try:
            return self.words.index(token)
        except ValueError:
            return self.unk_id

    def id_to_token(self, token_id):
        return self.words[token_id]
