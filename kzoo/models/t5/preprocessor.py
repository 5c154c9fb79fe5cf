"""T5's (input, target) packing."""

from kzoo.core.registry import register
from kzoo.tasks.seq2seq_preprocessor import Seq2SeqPreprocessor
from kzoo.models.t5.tokenizer import PAD, T5Tokenizer


@register
class T5Preprocessor(Seq2SeqPreprocessor):
    """(input text, target text) pairs -> T5's inputs, labels, weights:
    `input </s>` for the encoder, `target </s>` as labels, and the labels
    shifted right after `<pad>` (T5's decoder start) for the decoder, all
    padded with `<pad>`. Task prefixes ("summarize: ") are plain text in
    the input. Arguments: see `kzoo.tasks.seq2seq_preprocessor`.

    Example:
    ```python
    from kzoo import datasets
    # t5_small_multi's spiece.model comes with its weights (downloaded
    # once). Offline: a small one in T5's layout, trained here.
    tokenizer = kzoo.T5Tokenizer.from_texts(
        datasets.austen_paragraphs("emma")[:100], "spiece.model",
        vocabulary_size=300)
    preprocessor = kzoo.T5Preprocessor(tokenizer, sequence_length=16,
                                       target_length=8)
    x, y, weights = preprocessor((["summarize: A long text."], ["Short."]))
    # The decoder reads the target shifted right, from <pad> (id 0).
    assert x["decoder_token_ids"][0][0] == 0
    assert tokenizer.detokenize(y[0]) == "Short."
    ```
    """

    tokenizer_cls = T5Tokenizer
    start_token = None
    decoder_start_token = PAD
