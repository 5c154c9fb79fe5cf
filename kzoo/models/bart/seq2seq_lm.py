"""BART with its language-model head: (input, target) text pairs in, text
out."""

from kzoo.layers import TiedLMHead
from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.denoising_preprocessor import BartDenoisingPreprocessor
from kzoo.models.bart.preprocessor import BartSeq2SeqLMPreprocessor
from kzoo.models.registry import register
from kzoo.models.seq2seq_lm import Seq2SeqLM


@register
class BartSeq2SeqLM(Seq2SeqLM):
    """BART for text-to-text (summarisation, translation, denoising):
    `fit` on (input text, target text) pairs, `generate` targets for
    inputs.

    The LM head is the shared token embedding (tied, unscaled) plus
    `final_logits_bias`, as `BartForConditionalGeneration`'s. Decoding
    starts from `</s>` (BART's `decoder_start_token_id`, 2).

    Example:
    ```python
    bart = kzoo.BartSeq2SeqLM.from_preset("bart_base_en")
    bart.fit((["a long text ..."], ["a summary"]), epochs=1)
    bart.generate("a long text ...", max_new_tokens=20)
    ```
    """

    backbone_cls = BartBackbone
    preprocessor_cls = BartSeq2SeqLMPreprocessor
    decoder_start_token_id = 2
    # BART's fine-tuning rates are 3e-5 .. 1e-4 (fairseq's recipes).
    learning_rate = 5e-5
    pretrained_heads = ("lm_head",)

    def make_lm_head(self, backbone):
        return TiedLMHead(backbone.token_embedding, use_bias=True,
                          dtype=backbone.dtype_policy, name="lm_head")


@register
class BartDenoisingLM(BartSeq2SeqLM):
    """BART's pretraining task: `BartSeq2SeqLM` with
    `BartDenoisingPreprocessor`, so `fit` takes raw texts and learns to
    restore each from its noised version (text infilling and sentence
    permutation, fresh noise every epoch). The weights are
    `BartSeq2SeqLM`'s: a preset saved from one loads into the other.

    Example:
    ```python
    bart = kzoo.BartDenoisingLM.from_preset("bart_base_en",
                                            sequence_length=128)
    bart.fit(["Raw text to pretrain on.", "More of it."], epochs=1)
    bart.generate("The <mask> sat on the mat.", max_new_tokens=12)
    ```
    """

    preprocessor_cls = BartDenoisingPreprocessor
