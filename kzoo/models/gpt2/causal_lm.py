"""GPT-2 with its language-model head: training on raw text, and generate."""

import keras
from keras import ops

from kzoo import generation
from kzoo.generation.model_settings import GenerationSettingsMixin
from kzoo.layers import TiedLMHead
from kzoo.models.gpt2.backbone import GPT2Backbone
from kzoo.models.gpt2.preprocessor import GPT2CausalLMPreprocessor
from kzoo.core.registry import register
from kzoo.core.task import Task
from kzoo.tasks.task_wiring import task_inputs
from kzoo.training import default_optimizer
from kzoo.training.losses import token_loss


@register
class GPT2CausalLM(GenerationSettingsMixin, Task):
    """Next-token prediction with GPT-2; logits through the tied token
    embedding (no extra weights).

    `fit` takes raw strings (the preprocessor shifts labels and masks
    padding out of the loss); `generate` continues prompts.

    Example:
    ```python
    # GPT2CausalLM.from_preset("gpt2") is the released model (downloaded
    # once). Offline: a small random GPT-2 with the real tokenizer.
    backbone = kzoo.GPT2Backbone.from_preset(
        "gpt2", load_weights=False, num_layers=2, num_heads=2, hidden_dim=64,
        intermediate_dim=128)
    preprocessor = kzoo.GPT2CausalLMPreprocessor.from_preset(
        "gpt2", sequence_length=32)
    lm = kzoo.GPT2CausalLM(backbone, preprocessor=preprocessor)
    lm.fit(["Some text to adapt to.", "More text."], epochs=1)
    lm.generate("The meaning of life is", max_length=16)
    lm.generate(["Once upon", "It was a dark"], max_length=16,
                sampler=kzoo.generation.TopPSampler(p=0.9), seed=0)
    ```
    """

    backbone_cls = GPT2Backbone
    preprocessor_cls = GPT2CausalLMPreprocessor

    def __init__(self, backbone, preprocessor=None, **kwargs):
        # === Layers ===
        lm_head = TiedLMHead(backbone.token_embedding,
                             dtype=backbone.dtype_policy, name="lm_head")
        # === Functional model ===
        inputs, _ = task_inputs(backbone)
        logits = lm_head(backbone(inputs))  # (batch, seq, vocab)
        super().__init__(inputs=inputs, outputs=logits, **kwargs)
        self._finish_init(backbone, preprocessor)
        self.lm_head = lm_head

    def default_compile_args(self):
        return {
            "optimizer": default_optimizer(learning_rate=5e-5),
            # The mean over real tokens: padding neither adds loss nor
            # dilutes it (Keras' default divides by all positions).
            "loss": token_loss(),
            "weighted_metrics": [keras.metrics.SparseCategoricalAccuracy(
                name="accuracy")],
        }

    # ------------------------------------------------------------------
    # Generation
    # ------------------------------------------------------------------
    def generate(self, prompts, max_length=None, sampler=None, *,
                 max_new_tokens=None, stop_token_ids="auto",
                 strip_prompt=False, seed=None, use_cache=True,
                 generation_config=None, **controls):
        """Continue `prompts`.

        The model's `generation_config` (its checkpoint's settings, from
        the preset's `generation.json`; GPT-2's set none that change
        decoding) applies to whatever the arguments leave unset.

        Args:
            prompts: a string or list of strings (needs a preprocessor), or
                token ids: a list of ints, a list of such lists (prompts of
                different lengths are fine), or a dict with `token_ids` and
                `padding_mask` (right-padded).
            max_length: total length of each output, prompt included.
                Defaults to the settings' `max_length`, else the
                preprocessor's `sequence_length`, when `max_new_tokens`
                is not given.
            sampler: "greedy", "random", "top_k", "top_p", "beam", a
                `{"name": ..., **args}` dict, or a `kzoo.generation`
                sampler instance (`TopKSampler(k=10, temperature=0.7)`).
                None: beam search when the settings give `num_beams > 1`,
                else greedy.
            max_new_tokens: stop each prompt after this many new tokens.
            stop_token_ids: a row stops after producing one of these;
                "auto" is `<|endoftext|>`, None never stops early.
            strip_prompt: return only the new part.
            seed: an int makes random samplers reproducible.
            use_cache: decode with the key/value cache (one position per
                step); False reruns the whole sequence every step.
            generation_config: settings to use instead of the model's
                (`{}`: none of them).
            **controls: the decoding controls, as transformers names
                them: `min_length`, `min_new_tokens`,
                `no_repeat_ngram_size`, `repetition_penalty`,
                `forced_bos_token_id`, `forced_eos_token_id`,
                `bad_words_ids`; see `kzoo.generation.controls`.

        Returns:
            The same kind as `prompts`: strings for text, lists of ids for
            ids (each ends at its stop token, which is kept), a dict of
            right-padded `token_ids`/`padding_mask` for a dict. With
            `BeamSampler(return_all_beams=True)`: a dict with `sequences`
            (per prompt, every beam, best first) and `scores` (batch,
            beams).

        The loop is compiled on first use (`jax.jit`, XLA `tf.function`; on
        torch a Python loop replaying TorchScript-traced forward passes) and
        reused for the same settings and shapes: the batch size,
        `max_length` and the longest prompt rounded up to a power of two
        fix the shapes.
        """
        if generation_config is None:
            generation_config = self.generation_config
        return generation.generate(
            self, prompts, max_length=max_length, sampler=sampler,
            max_new_tokens=max_new_tokens, stop_token_ids=stop_token_ids,
            strip_prompt=strip_prompt, seed=seed, use_cache=use_cache,
            generation_config=generation_config,
            preprocessor=self.preprocessor, **self.generation_arguments(),
            **controls)

    def generation_arguments(self):
        """What `kzoo.generation.generate` needs to know of this model
        (an exported generator reads the same)."""
        tokenizer = getattr(self.preprocessor, "tokenizer", None)
        end_token_id = getattr(tokenizer, "end_token_id", None)
        return dict(
            vocabulary_size=self.backbone.vocabulary_size,
            position_limit=self.backbone.max_sequence_length,
            pad_token_id=0 if end_token_id is None else end_token_id,
            default_stop_token_ids=() if end_token_id is None
            else (end_token_id,),
            default_max_length=getattr(self.preprocessor, "sequence_length",
                                       None))

    # The decoder protocol of kzoo.generation.loop -----------------------
    def generation_cache(self, batch_size, max_length):
        return self.backbone.init_cache(batch_size, max_length)

    def generation_prefill(self, token_ids, cache):
        _, cache = self.backbone.call_with_cache(token_ids, cache, 0)
        return cache

    def generation_step(self, token_ids, cache, index):
        hidden, cache = self.backbone.call_with_cache(token_ids, cache, index)
        hidden = hidden[:, -1, :]  # (batch, hidden)
        # The same product as `lm_head`, written `(E @ h^T)^T`: with a
        # handful of rows, eager BLAS (torch on CPU) runs this form about
        # 3x faster than `h @ E^T` on the transposed (vocab, hidden)
        # matrix; XLA picks its own layout either way.
        embeddings = self.backbone.token_embedding.embeddings
        logits = ops.transpose(
            ops.matmul(embeddings, ops.transpose(hidden)))  # (batch, vocab)
        return logits, cache

    def generation_logits(self, token_ids, index):
        hidden = self.backbone(
            {"token_ids": token_ids,
             "padding_mask": ops.ones_like(token_ids)}, training=False)
        batch = ops.shape(token_ids)[0]
        hidden_at = ops.slice(hidden, [0, index, 0],
                              [batch, 1, ops.shape(hidden)[-1]])
        return self.lm_head(ops.squeeze(hidden_at, 1))
