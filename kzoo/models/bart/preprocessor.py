"""BART's packing: (input, target) pairs for the seq2seq tasks, texts
(and text pairs) for the classifier."""

import tensorflow as tf

from kzoo.models.bart.tokenizer import BartTokenizer
from kzoo.core.registry import register
from kzoo.models.roberta.preprocessor import RobertaPreprocessor
from kzoo.models.roberta.tokenizer import BOS, EOS
from kzoo.tasks.seq2seq_preprocessor import Seq2SeqPreprocessor


@register
class BartSeq2SeqLMPreprocessor(Seq2SeqPreprocessor):
    """(input text, target text) pairs -> BART's inputs, labels, weights:
    `<s> input </s>` for the encoder, `<s> target </s>` as labels, and
    the labels shifted right after `</s>` (BART's decoder start) for the
    decoder, all padded with `<pad>`, as `transformers` fine-tunes BART
    (`shift_tokens_right`). Arguments: see
    `kzoo.tasks.seq2seq_preprocessor`.

    Example:
    ```python
    # Setup: the example of kzoo.BartPreprocessor (tokenizer).
    preprocessor = kzoo.BartSeq2SeqLMPreprocessor(
        tokenizer, sequence_length=16, target_length=8)
    x, y, weights = preprocessor((["A long text."], ["Short."]))
    # The decoder reads the target shifted right, from </s>.
    assert x["decoder_token_ids"][0][0] == tokenizer.end_token_id
    assert x["decoder_token_ids"].shape == y.shape == (1, 8)
    ```
    """

    tokenizer_cls = BartTokenizer
    start_token = BOS
    decoder_start_token = EOS

    def hidden_ids(self):
        # A fine-tuned BART emits `<s>` after the decoder start (its labels
        # begin with it), and a young one may emit any framing token: the
        # text leaves out `<s>`, `</s>` and `<pad>` wherever they are (as
        # transformers' `decode(..., skip_special_tokens=True)` does).
        self._ensure_setup()
        return (self.start_token_id, self.end_token_id, self.pad_token_id)


def shift_right(values, first):
    """`values (..., seq)` moved one place right, `first` in front and the
    last one dropped (transformers' `shift_tokens_right`)."""
    values = tf.convert_to_tensor(values)
    front = tf.fill(tf.concat([tf.shape(values)[:-1], [1]], axis=0),
                    tf.cast(first, values.dtype))
    return tf.concat([front, values[..., :-1]], axis=-1)


@register
class BartPreprocessor(RobertaPreprocessor):
    """Raw text (or a tuple of two lists for text pairs) -> the inputs of
    `BartTextClassifier`, as `transformers`' `BartForSequenceClassification`
    reads them: the encoder gets `<s> A </s>` (or `<s> A </s></s> B </s>`,
    RoBERTa's packing, which BART's tokenizer shares), right-padded with
    `<pad>`; the decoder gets the same ids shifted right after `</s>`
    (BART's decoder start), as BART does when no decoder input is given.

    Outputs: `encoder_token_ids`, `encoder_padding_mask`,
    `decoder_token_ids`, `decoder_padding_mask`, all `(batch,
    sequence_length)`.

    Args: as `RobertaPreprocessor` (`tokenizer`, a `BartTokenizer`;
    `sequence_length`; `truncate`).

    Example:
    ```python
    import json
    from kzoo import presets
    # bart_base_en's vocab.json comes with its weights (downloaded once).
    # Offline: GPT-2's BPE (kzoo ships it) in BART's layout.
    gpt2 = presets.resolve("gpt2")
    tokens = ["<s>", "<pad>", "</s>", "<unk>",
              *json.loads(gpt2.file("vocab.json").read_text()), "<mask>"]
    with open("vocab.json", "w") as f:
        json.dump({token: i for i, token in enumerate(tokens)}, f)
    tokenizer = kzoo.BartTokenizer("vocab.json", gpt2.file("merges.txt"))
    preprocessor = kzoo.BartPreprocessor(tokenizer, sequence_length=16)
    x = preprocessor((["The fox."], ["It jumped."]))   # or single texts
    print(tokenizer.detokenize(x["encoder_token_ids"][0]))
    # <s>The fox.</s></s>It jumped.</s><pad><pad>...
    # The decoder reads the same, shifted right after </s>.
    assert x["decoder_token_ids"][0][0] == tokenizer.end_token_id
    ```
    """

    tokenizer_cls = BartTokenizer
    # The generic heads (token classification, multiple choice, question
    # answering) read an encoder's `sequence_output`; BART's classifier
    # packs as RoBERTa but its backbone is an encoder-decoder.
    feeds_encoder_heads = False

    def pack_ids(self, segments):
        packed = super().pack_ids(segments)
        token_ids, padding_mask = packed["token_ids"], packed["padding_mask"]
        return {"encoder_token_ids": token_ids,
                "encoder_padding_mask": padding_mask,
                "decoder_token_ids": shift_right(
                    token_ids, self.tokenizer.end_token_id),
                "decoder_padding_mask": shift_right(padding_mask, 1)}
