"""T5's tokenizer: its SentencePiece model, then 100 sentinels."""

import tensorflow as tf

from kzoo.core.registry import register
from kzoo.preprocessing.text import WHITESPACE
from kzoo.core.sentencepiece_tokenizer import SentencePieceTokenizer

PAD, EOS, UNK = "<pad>", "</s>", "<unk>"
NUM_SENTINELS = 100


def sentinel(i):
    """The i-th span-corruption sentinel, `<extra_id_i>`."""
    return f"<extra_id_{i}>"


@register
class T5Tokenizer(SentencePieceTokenizer):
    """SentencePiece with T5's vocabulary: the model's own pieces
    (`<pad>`=0, `</s>`=1, `<unk>`=2 first, as the released `spiece.model`
    has them), then the 100 sentinels in the original's descending order:
    `<extra_id_99>` first, `<extra_id_0>` the last id (32,099 for the
    released 32,000-piece model; the embedding table has 32,128 rows).

    Typed in a text, `<pad>`, `</s>`, `<unk>` and every `<extra_id_N>` are
    their one id, as in Hugging Face's `T5Tokenizer`.

    Args:
        proto: path to T5's `spiece.model`.

    `tokenize` adds nothing; `T5Preprocessor` appends `</s>` to inputs
    and targets.

    Example:
    ```python
    from kzoo import datasets
    # t5_small_multi's spiece.model comes with its weights (downloaded
    # once). Offline: a small one in T5's layout, trained here.
    tokenizer = kzoo.T5Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    # The model's pieces, then 100 sentinels, <extra_id_0> last.
    assert tokenizer.sentinel_id(0) == tokenizer.vocabulary_size - 1
    ids = np.asarray(tokenizer("Emma smiled <extra_id_0> again")).tolist()
    assert tokenizer.sentinel_id(0) in ids   # typed, it is its one id
    assert tokenizer.detokenize(tokenizer("Emma smiled")) == "Emma smiled"
    ```
    """

    # The released layout: <pad>=0, </s>=1, <unk>=2 (sentinels appended).
    trainer_options = {"pad_id": 0, "eos_id": 1, "unk_id": 2, "bos_id": -1}
    special_tokens = (PAD, EOS, UNK) + tuple(
        sentinel(i) for i in range(NUM_SENTINELS))

    def family_vocabulary(self, pieces):
        if pieces[:3] != [PAD, EOS, UNK]:
            raise ValueError(
                f"its first pieces are {pieces[:3]}; T5's SentencePiece "
                f"model starts with {[PAD, EOS, UNK]}")
        return list(pieces) + [sentinel(i) for i in
                               reversed(range(NUM_SENTINELS))]

    def normalize(self, text):
        # Hugging Face splits words on any whitespace before SentencePiece
        # sees them (SentencePiece itself only on " ").
        text = tf.strings.regex_replace(text, WHITESPACE + "+", " ")
        return super().normalize(text)

    @property
    def pad_token_id(self):
        return self.token_to_id(PAD)

    @property
    def end_token_id(self):
        return self.token_to_id(EOS)

    @property
    def unk_token_id(self):
        return self.token_to_id(UNK)

    def sentinel_id(self, i):
        """The id of `<extra_id_i>` (descending: sentinel 0 is the last
        id)."""
        if not 0 <= int(i) < NUM_SENTINELS:
            raise ValueError(f"T5 has sentinels 0..{NUM_SENTINELS - 1}; "
                             f"got {i}.")
        return self.token_to_id(sentinel(int(i)))
