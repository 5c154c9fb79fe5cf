"""`Seq2SeqLM`: an encoder-decoder with its LM head, trained on (input,
target) pairs with `fit` and decoding with `generate`; shared by the
encoder-decoder families (T5, BART).

A family's task subclasses it and provides the head:

    make_lm_head(backbone) -> a layer: decoder states (batch, ..., hidden)
        -> logits (batch, ..., vocab); the task keeps it as `lm_head`

Its backbone provides the pieces generation runs separately (see
`T5Backbone`): `encode(token_ids, padding_mask)`,
`decode(token_ids, encoder_output, encoder_padding_mask)` (no cache),
`cross_attention_caches(encoder_output)`, `init_cache(batch, max_length)`
and `decode_with_cache(token_ids, cache, index, encoder_padding_mask,
cross_caches)`; its outputs include `decoder_sequence_output`; its inputs
are `encoder_token_ids`, `encoder_padding_mask`, `decoder_token_ids`,
`decoder_padding_mask`.
"""

import keras
from keras import ops

from kzoo import presets
from kzoo.generation.model_settings import GenerationSettingsMixin
from kzoo.generation.seq2seq import generate_seq2seq
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss


class Seq2SeqLM(GenerationSettingsMixin, Task):
    """Base of the encoder-decoder LM tasks; see the module doc.

    Subclasses set `backbone_cls`, `preprocessor_cls`,
    `decoder_start_token_id` (when the preprocessor does not say), and
    implement `make_lm_head`.

    `generation_config` holds the checkpoint's generation settings (a
    preset's `generation.json`, in transformers' key names), which
    `generate` follows unless told otherwise.
    """

    decoder_start_token_id = 0
    learning_rate = 1e-4
    # `from_preset`'s preprocessor reads as many input tokens as the
    # checkpoint's position table holds (see `preprocessor_for`).
    inputs_fill_position_table = True

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        lm_head = self.make_lm_head(backbone)
        # === Functional model ===
        inputs, backbone_inputs = task_inputs(backbone)
        outputs = backbone(backbone_inputs)
        logits = lm_head(outputs["decoder_sequence_output"])
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.lm_head = lm_head

    def make_lm_head(self, backbone):
        raise NotImplementedError

    @classmethod
    def preprocessor_for(cls, preset, **kwargs):
        """The encoder reads as many tokens as the checkpoint's position
        table holds (BART: 1,024), unless the preset saved a preprocessor
        or the caller says; without a table (T5's relative positions),
        the preprocessor's default."""
        preset = presets.resolve(preset)
        if cls.inputs_fill_position_table and \
                "sequence_length" not in kwargs and \
                not preset.has("preprocessor.json"):
            config = preset.json("config.json").get("config") or {}
            if config.get("max_sequence_length"):
                kwargs["sequence_length"] = config["max_sequence_length"]
        return super().preprocessor_for(preset, **kwargs)

    def lm_logits(self, hidden):
        """Decoder states -> vocabulary logits (the task's head)."""
        return self.lm_head(hidden)

    def default_compile_args(self):
        return {
            "optimizer": default_optimizer(
                learning_rate=self.learning_rate),
            # The mean over the real target tokens (the preprocessor's
            # sample weights): padding adds no loss.
            "loss": token_loss(),
            "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy(
                name="accuracy")],
        }

    # ------------------------------------------------------------------
    # Generation
    # ------------------------------------------------------------------
    def generate(self, inputs, max_length=None, sampler=None, *,
                 max_new_tokens=None, decoder_prompts=None,
                 stop_token_ids="auto", strip_prompt=False, seed=None,
                 use_cache=True, generation_config=None, **controls):
        """Decode a target for each input.

        The model's `generation_config` (its checkpoint's settings: for
        `bart_large_cnn_en` beam search with 4 beams, `length_penalty=2.0`,
        `early_stopping=True`, 56 to 142 decoder tokens, no repeated
        trigram, `<s>` forced first and `</s>` last) applies to whatever
        the arguments leave unset.

        Args:
            inputs: text (a string or list of strings; needs a
                preprocessor), token ids (a list of ints, or one list per
                input, each with the end token the encoder expects), or a
                dict with `token_ids` and `padding_mask` (right-padded).
            max_length: decoder length, the start token included.
                Defaults to the settings' `max_length`, else the
                preprocessor's `target_length`.
            sampler: "greedy", "random", "top_k", "top_p", "beam", or a
                `kzoo.generation` sampler instance. None: beam search
                when the settings give `num_beams > 1`, else greedy; "beam"
                alone takes the settings' `num_beams`, `length_penalty`
                and `early_stopping`.
            max_new_tokens: stop after this many new tokens.
            decoder_prompts: forced decoder prefixes (each with the start
                token), instead of the start token alone.
            stop_token_ids: "auto" is the end token (`</s>`), None never
                stops early.
            strip_prompt: return only the new tokens.
            seed: an int makes random samplers reproducible.
            use_cache: decode with key/value caches (and cross-attention
                keys/values projected once); False reruns the decoder.
            generation_config: settings to use instead of the model's
                (`{}`: none of them).
            **controls: the decoding controls, as transformers names
                them: `min_length`, `min_new_tokens` (no stop token
                before), `no_repeat_ngram_size`, `repetition_penalty`,
                `forced_bos_token_id` (the first new token),
                `forced_eos_token_id` (the last one, at the length limit),
                `bad_words_ids` (lists of ids never produced); see
                `kzoo.generation.controls`.

        Returns the decoder outputs in the kind of `inputs`: strings for
        text (start and stop tokens dropped), id lists for ids (the start
        token first), a dict for a dict.

        The encoder runs once, inside the same compiled program as the
        decoding loop (`kzoo.generation.generate_seq2seq`).
        """
        if generation_config is None:
            generation_config = self.generation_config
        return generate_seq2seq(
            self, inputs, max_length, sampler,
            max_new_tokens=max_new_tokens, decoder_prompts=decoder_prompts,
            stop_token_ids=stop_token_ids, strip_prompt=strip_prompt,
            seed=seed, use_cache=use_cache,
            generation_config=generation_config,
            preprocessor=self.preprocessor, **self.generation_arguments(),
            **controls)

    def generation_arguments(self):
        """What `kzoo.generation.generate_seq2seq` needs to know of this
        model (an exported generator reads the same)."""
        preprocessor = self.preprocessor
        tokenizer = getattr(preprocessor, "tokenizer", None)
        end_token_id = getattr(tokenizer, "end_token_id", None)
        pad_token_id = getattr(tokenizer, "pad_token_id", None)
        start = getattr(preprocessor, "decoder_start_token_id", None)
        return dict(
            vocabulary_size=self.backbone.vocabulary_size,
            encoder_length_limit=self.backbone.max_sequence_length,
            position_limit=self.backbone.max_sequence_length,
            decoder_start_token_id=(self.decoder_start_token_id
                                    if start is None else start),
            pad_token_id=0 if pad_token_id is None else pad_token_id,
            default_stop_token_ids=(() if end_token_id is None
                                    else (end_token_id,)),
            default_max_length=getattr(preprocessor, "target_length", None))

    # The encoder-decoder protocol of kzoo.generation.encoder_decoder ----
    def generation_encode(self, token_ids, padding_mask):
        encoder_output = self.backbone.encode(token_ids, padding_mask)
        return [encoder_output, padding_mask] + \
            self.backbone.cross_attention_caches(encoder_output)

    def generation_cache(self, batch_size, max_length):
        return self.backbone.init_cache(batch_size, max_length)

    def generation_prefill(self, token_ids, cache, encoder_state):
        _, padding_mask, *cross = encoder_state
        return self.backbone.decode_with_cache(token_ids, cache, 0,
                                               padding_mask, cross)[1]

    def generation_step(self, token_ids, cache, index, encoder_state):
        _, padding_mask, *cross = encoder_state
        hidden, cache = self.backbone.decode_with_cache(
            token_ids, cache, index, padding_mask, cross)
        return self.lm_logits(hidden[:, -1, :]), cache  # (batch, vocab)

    def generation_logits(self, token_ids, index, encoder_state):
        encoder_output, padding_mask = encoder_state[:2]
        hidden = self.backbone.decode(token_ids, encoder_output,
                                      padding_mask)  # (batch, T, hidden)
        batch = ops.shape(token_ids)[0]
        hidden_at = ops.slice(hidden, [0, index, 0],
                              [batch, 1, ops.shape(hidden)[-1]])
        return self.lm_logits(ops.squeeze(hidden_at, 1))
