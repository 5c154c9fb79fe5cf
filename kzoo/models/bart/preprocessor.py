"""BART's (input, target) packing."""

import numpy as np

from kzoo.models.bart.tokenizer import BartTokenizer
from kzoo.models.registry import register
from kzoo.models.roberta.tokenizer import BOS, EOS
from kzoo.models.seq2seq_preprocessor import Seq2SeqPreprocessor


@register
class BartSeq2SeqLMPreprocessor(Seq2SeqPreprocessor):
    """(input text, target text) pairs -> BART's inputs, labels, weights:
    `<s> input </s>` for the encoder, `<s> target </s>` as labels, and
    the labels shifted right after `</s>` (BART's decoder start) for the
    decoder, all padded with `<pad>`, as `transformers` fine-tunes BART
    (`shift_tokens_right`). Arguments: see
    `kzoo.models.seq2seq_preprocessor`.

    Example:
    ```python
    preprocessor = kzoo.BartSeq2SeqLMPreprocessor.from_preset(
        "bart_base_en", sequence_length=64, target_length=16)
    x, y, weights = preprocessor((["A long text."], ["Short."]))
    ```
    """

    tokenizer_cls = BartTokenizer
    start_token = BOS
    decoder_start_token = EOS

    def generate_postprocess(self, id_lists, stop_token_ids=(),
                             strip_start=True):
        # A fine-tuned BART emits `<s>` after the decoder start (its labels
        # begin with it), and a young one may emit any framing token: the
        # text leaves out `<s>`, `</s>` and `<pad>` wherever they are (as
        # transformers' `decode(..., skip_special_tokens=True)` does).
        self._ensure_setup()
        framing = {self.start_token_id, self.end_token_id, self.pad_token_id}
        id_lists = [[t for t in np.asarray(ids).reshape(-1).tolist()
                     if t not in framing] for ids in id_lists]
        return super().generate_postprocess(id_lists, stop_token_ids,
                                            strip_start=False)
