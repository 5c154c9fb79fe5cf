"""Shared BART test material: random `transformers` BART checkpoints with
odd configs, inputs for both stacks, the stand-in preset, a tiny backbone."""

import numpy as np

from family_references import Reference
from parity_harness import make_hf_model

HF_CONFIGS = {
    # A deeper decoder with more heads and a narrower FFN than the
    # encoder's; scaled embeddings; exact GELU.
    "odd24": dict(vocab_size=93, d_model=24, encoder_layers=2,
                  decoder_layers=3, encoder_attention_heads=3,
                  decoder_attention_heads=4, encoder_ffn_dim=37,
                  decoder_ffn_dim=19, max_position_embeddings=40,
                  activation_function="gelu", scale_embedding=True),
    # 5 heads of 4 in the encoder, 2 of 10 in the decoder; tanh GELU; a
    # short position table (the inputs reach its end).
    "odd20": dict(vocab_size=71, d_model=20, encoder_layers=3,
                  decoder_layers=2, encoder_attention_heads=5,
                  decoder_attention_heads=2, encoder_ffn_dim=11,
                  decoder_ffn_dim=13, max_position_embeddings=23,
                  activation_function="gelu_new", scale_embedding=False),
}


# Random BARTs tend to repeat one token whatever the input (the tied head
# favours the token just read); these seeds give greedy outputs that differ
# by input and change token mid-sequence, so the generation check means
# something.
SEEDS = {"odd24": 6, "odd20": 2}


def make_hf_bart(name, seed=None, architecture="BartForConditionalGeneration",
                 **overrides):
    """A random `transformers` BART of `HF_CONFIGS[name]` with every
    parameter randomised (parity_harness.make_hf_model: LayerNorm scales
    and `final_logits_bias` too, so a swapped or missed tensor cannot
    pass), seeded as SEEDS says unless `seed` does. `overrides`: config
    fields (`num_labels`)."""
    seed = SEEDS[name] if seed is None else seed
    return make_hf_model(architecture, {**HF_CONFIGS[name], **overrides},
                         seed)


def random_bart_inputs(vocabulary_size, seed=0, batch=3, source=23,
                       target=19):
    """Encoder and decoder inputs of different lengths, right-padded rows
    on both sides; the decoder starts from `</s>` (2)."""
    rng = np.random.default_rng(seed)
    enc = rng.integers(4, vocabulary_size, (batch, source)).astype("int32")
    enc_mask = np.ones_like(enc)
    enc_mask[1, source - 8:] = 0
    enc_mask[2, 4:] = 0
    enc[enc_mask == 0] = 1
    dec = rng.integers(4, vocabulary_size, (batch, target)).astype("int32")
    dec[:, 0] = 2
    dec_mask = np.ones_like(dec)
    dec_mask[1, target - 7:] = 0
    dec[dec_mask == 0] = 1
    return {"encoder_token_ids": enc, "encoder_padding_mask": enc_mask,
            "decoder_token_ids": dec, "decoder_padding_mask": dec_mask}


# The stand-in for the named preset `bart_base_en` (tests/data/README.md).
from text_testing import STAND_IN_PRESETS  # noqa: E402

BART_PRESET = STAND_IN_PRESETS / "bart_base_en"
BART_VOCABULARY = 50265
TINY_BART = dict(vocabulary_size=BART_VOCABULARY, num_layers=2, num_heads=2,
                 hidden_dim=16, intermediate_dim=32, max_sequence_length=64)


def make_tiny_bart(**overrides):
    import kzoo
    return kzoo.BartBackbone(**{**TINY_BART, **overrides})


def fit_batch_losses(lm, x, batch_size, y=None):
    """Fit `lm` for one epoch on raw `x` (and labels `y`) and return each
    batch's loss.
    One epoch: each one builds a new tf.data pipeline, whose byte-level
    BPE tables cost seconds to set up. Keras logs the epoch's running
    mean; with equal batches the k-th batch's loss is
    `k * mean_k - (k - 1) * mean_(k-1)`."""
    import keras
    means = []

    class Record(keras.callbacks.Callback):
        def on_train_batch_end(self, batch, logs=None):
            means.append(float(logs["loss"]))

    lm.fit(x, y, batch_size=batch_size, epochs=1, verbose=0,
           shuffle=False, callbacks=[Record()])
    means = np.asarray(means)
    steps = np.arange(1, len(means) + 1)
    totals = steps * means
    return np.diff(np.concatenate([[0.0], totals]))


# What the tests over every family read (tests/family_references.py).
REFERENCE = Reference(tiny_config=lambda dropout: dict(
    vocab_size=64, d_model=8, encoder_layers=1, decoder_layers=1,
    encoder_attention_heads=2, decoder_attention_heads=2, encoder_ffn_dim=16,
    decoder_ffn_dim=16, max_position_embeddings=32, dropout=dropout))
