"""BART's (input, target) packing."""

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
        # begin with it): not part of the text.
        self._ensure_setup()
        if strip_start:
            start = (self.decoder_start_token_id, self.start_token_id)
            id_lists = [list(ids)[2:] if tuple(list(ids)[:2]) == start
                        else ids for ids in id_lists]
        return super().generate_postprocess(id_lists, stop_token_ids,
                                            strip_start)
