"""Small GPT-2 models for the GPT-2 and generation tests: kzoo models and
and the Hugging Face model (transformers, a test dependency) with the very
same weights."""

import numpy as np

import kzoo
from family_references import Reference

# Two tiny configurations (Hugging Face GPT2Config fields). Vocabularies are
# small so random weights give varied, non-degenerate generations.
HF_CONFIGS = {
    "a": dict(vocab_size=97, n_positions=64, n_embd=32, n_layer=2, n_head=4),
    "b": dict(vocab_size=211, n_positions=48, n_embd=64, n_layer=2, n_head=2,
              n_inner=96, layer_norm_epsilon=1e-5),
}
# Special ids for the tiny vocabularies: 0 = pad, 1 = end of text.
PAD, EOS = 0, 1

TINY_GPT2 = dict(vocabulary_size=97, num_layers=2, num_heads=4, hidden_dim=32,
                 intermediate_dim=64, max_sequence_length=64)
# With the real vocabulary, for tests that tokenize text.
TINY_GPT2_FULL_VOCAB = dict(TINY_GPT2, vocabulary_size=50257)


def tiny_backbone(**overrides):
    return kzoo.GPT2Backbone(**{**TINY_GPT2, **overrides})


def tiny_causal_lm(preprocessor=None, **overrides):
    return kzoo.GPT2CausalLM(tiny_backbone(**overrides),
                             preprocessor=preprocessor)


def hf_pair(name, seed=0, preprocessor=None, **config_overrides):
    """`(transformers GPT2LMHeadModel, kzoo GPT2CausalLM)` with identical
    random weights (no dropout); `config_overrides` change GPT2Config
    fields (e.g. `vocab_size=50257` for text)."""
    import transformers
    import torch
    from kzoo.models.gpt2.convert import GPT2Converter
    transformers.logging.set_verbosity_error()
    config = transformers.GPT2Config(
        **{**HF_CONFIGS[name], **config_overrides}, resid_pdrop=0.0,
        embd_pdrop=0.0, attn_pdrop=0.0, bos_token_id=EOS, eos_token_id=EOS, pad_token_id=PAD)
    torch.manual_seed(seed)
    hf_model = transformers.GPT2LMHeadModel(config).eval()
    converter = GPT2Converter()
    lm = kzoo.GPT2CausalLM(kzoo.GPT2Backbone(
        **converter.backbone_kwargs(config.to_dict())),
        preprocessor=preprocessor)
    load_state_dict(lm.backbone, hf_model.state_dict())
    return hf_model, lm


def load_state_dict(backbone, state_dict):
    """Assign a Hugging Face GPT-2 state dict (torch tensors) through the
    converter's weight specs."""
    from kzoo.models.gpt2.convert import GPT2Converter
    converter = GPT2Converter()
    for spec in converter.backbone_specs(backbone, {}):
        name = spec.hf_name
        tensor = state_dict.get(name, state_dict.get("transformer." + name))
        values = spec.to_kzoo(tensor.detach().cpu().numpy())
        for variable, value in zip(spec.variables, values):
            variable.assign(value)


def random_prompts(lengths, vocabulary_size, seed=0, low=2):
    """Prompts of the given lengths, avoiding the special ids 0 and 1."""
    rng = np.random.default_rng(seed)
    return [rng.integers(low, vocabulary_size, n).tolist() for n in lengths]


def hf_left_padded(prompts):
    """Hugging Face batching: left padding plus an attention mask."""
    import torch
    width = max(len(p) for p in prompts)
    ids = torch.full((len(prompts), width), PAD, dtype=torch.long)
    mask = torch.zeros((len(prompts), width), dtype=torch.long)
    for i, prompt in enumerate(prompts):
        ids[i, width - len(prompt):] = torch.tensor(prompt)
        mask[i, width - len(prompt):] = 1
    return ids, mask


# What the tests over every family read (tests/family_references.py): a
# tiny config whose residual and embedding dropouts (one rate to kzoo)
# are `dropout`.
REFERENCE = Reference(tiny_config=lambda dropout: dict(
    vocab_size=64, n_positions=32, n_embd=8, n_layer=1, n_head=2,
    resid_pdrop=dropout, embd_pdrop=dropout, bos_token_id=1,
    eos_token_id=1))
