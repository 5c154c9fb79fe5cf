"""Shared T5 test material: random `transformers` T5 checkpoints with odd
configs (a v1.0 and a v1.1 one) and inputs for both stacks."""

import numpy as np

HF_CONFIGS = {
    # v1.0: ReLU FFN, tied embeddings with the d_model ** -0.5 rescale;
    # 3 heads of 7 (d_kv does not divide d_model), a deeper decoder, few
    # buckets with a short max distance (so far buckets are exercised).
    "v1_0": dict(vocab_size=67, d_model=20, d_kv=7, d_ff=13, num_layers=2,
                 num_decoder_layers=3, num_heads=3, feed_forward_proj="relu",
                 relative_attention_num_buckets=6,
                 relative_attention_max_distance=11, layer_norm_epsilon=1e-5),
    # v1.1 / Flan-T5: gated GELU (tanh), untied LM head, no rescale.
    "v1_1": dict(vocab_size=71, d_model=18, d_kv=5, d_ff=11, num_layers=3,
                 num_decoder_layers=2, num_heads=4,
                 feed_forward_proj="gated-gelu", tie_word_embeddings=False,
                 relative_attention_num_buckets=10,
                 relative_attention_max_distance=9),
}


def make_hf_t5(name, seed=0, architecture="T5ForConditionalGeneration"):
    """A random `transformers` T5 (its own initialisation, RMSNorm scales
    randomised too, so a missed norm cannot pass; v1.1 gets an LM head of
    its own)."""
    import torch
    import transformers
    config = transformers.T5Config(**HF_CONFIGS[name])
    torch.manual_seed(seed)
    model = getattr(transformers, architecture)(config).eval()
    generator = torch.Generator().manual_seed(seed + 1)
    with torch.no_grad():
        if name != "v1_0" and hasattr(model, "lm_head"):
            shape = model.lm_head.weight.shape
            model.lm_head.weight = torch.nn.Parameter(
                torch.randn(shape, generator=generator) * shape[1] ** -0.5)
        for parameter_name, parameter in model.named_parameters():
            if "layer_norm" in parameter_name:
                noise = torch.randn(parameter.shape, generator=generator)
                parameter.copy_(1.0 + 0.2 * noise)
    return model


def random_t5_inputs(vocabulary_size, seed=0, batch=3, source=23, target=19):
    """Encoder and decoder inputs of different lengths, right-padded rows
    on both sides."""
    rng = np.random.default_rng(seed)
    enc = rng.integers(2, vocabulary_size, (batch, source)).astype("int32")
    enc_mask = np.ones_like(enc)
    enc_mask[1, source - 8:] = 0
    enc_mask[2, 4:] = 0
    dec = rng.integers(2, vocabulary_size, (batch, target)).astype("int32")
    dec[:, 0] = 0  # the decoder start token
    dec_mask = np.ones_like(dec)
    dec_mask[1, target - 7:] = 0
    return {"encoder_token_ids": enc, "encoder_padding_mask": enc_mask,
            "decoder_token_ids": dec, "decoder_padding_mask": dec_mask}


# The stand-in for the named preset `t5_small_multi` (tests/data/README.md).
from text_testing import STAND_IN_PRESETS  # noqa: E402

T5_PRESET = STAND_IN_PRESETS / "t5_small_multi"
SPM_MODEL = T5_PRESET / "spiece.model"
T5_VOCABULARY = 1100  # 1,000 pieces + 100 sentinels
TINY_T5 = dict(vocabulary_size=T5_VOCABULARY, num_layers=2,
               num_decoder_layers=2, num_heads=2, hidden_dim=16,
               intermediate_dim=32, key_value_dim=8,
               relative_attention_num_buckets=8,
               relative_attention_max_distance=20)


def make_tiny_t5(**overrides):
    import kzoo
    return kzoo.T5Backbone(**{**TINY_T5, **overrides})


def hf_reference_tokenizer(folder):
    """transformers' T5Tokenizer built from the stand-in's SentencePiece
    model alone (transformers converts the model itself)."""
    import shutil
    import transformers
    transformers.logging.set_verbosity_error()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPM_MODEL, folder / "spiece.model")
    return transformers.T5Tokenizer.from_pretrained(folder)
