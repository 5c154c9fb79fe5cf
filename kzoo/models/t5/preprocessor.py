"""T5's (input, target) packing."""

from kzoo.models.registry import register
from kzoo.models.seq2seq_preprocessor import Seq2SeqPreprocessor
from kzoo.models.t5.tokenizer import PAD, T5Tokenizer


@register
class T5Preprocessor(Seq2SeqPreprocessor):
    """(input text, target text) pairs -> T5's inputs, labels, weights:
    `input </s>` for the encoder, `target </s>` as labels, and the labels
    shifted right after `<pad>` (T5's decoder start) for the decoder, all
    padded with `<pad>`. Task prefixes ("summarize: ") are plain text in
    the input. Arguments: see `kzoo.models.seq2seq_preprocessor`.

    Example:
    ```python
    preprocessor = kzoo.T5Preprocessor.from_preset(
        "t5_small_multi", sequence_length=64, target_length=16)
    x, y, weights = preprocessor((["summarize: A long text."],
                                  ["Short."]))
    ```
    """

    tokenizer_cls = T5Tokenizer
    start_token = None
    decoder_start_token = PAD
