"""BART with its language-model head: (input, target) text pairs in, text
out."""

from kzoo.layers import TiedLMHead
from kzoo.models.bart.backbone import BartBackbone
from kzoo.models.bart.denoising_preprocessor import BartDenoisingPreprocessor
from kzoo.models.bart.preprocessor import BartSeq2SeqLMPreprocessor
from kzoo.core.registry import register
from kzoo.tasks.seq2seq_lm import Seq2SeqLM


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
    backbone = kzoo.BartBackbone(
        vocabulary_size=tokenizer.vocabulary_size, num_layers=1,
        num_heads=2, hidden_dim=16, intermediate_dim=32,
        max_sequence_length=64)
    # from_preset("bart_base_en") is the released model.
    bart = kzoo.BartSeq2SeqLM(
        backbone, preprocessor=kzoo.BartSeq2SeqLMPreprocessor(
            tokenizer, sequence_length=16, target_length=8))
    # bart.fit((sources, targets)) fine-tunes it (e.g. for summaries).
    summary = bart.generate("a long text ...", max_new_tokens=4)
    assert isinstance(summary, str)   # random weights: random words
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
    # Setup: the example of kzoo.BartSeq2SeqLM (tokenizer, backbone).
    bart = kzoo.BartDenoisingLM(
        backbone, preprocessor=kzoo.BartDenoisingPreprocessor(
            tokenizer, sequence_length=16))
    history = bart.fit(["Raw text to pretrain on.", "More of it."],
                       epochs=1, verbose=0)   # raw texts: no labels
    assert history.history["loss"][0] > 0
    ```
    """

    preprocessor_cls = BartDenoisingPreprocessor
    # Pretraining windows keep the denoising preprocessor's own length.
    inputs_fill_position_table = False
