"""Shared by the ELECTRA tests (model and conversion): the named preset
whose tokenizer ships offline (bert-base-uncased's vocab.txt) and a tiny
factorised backbone."""

import numpy as np

import kzoo
from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model

ELECTRA_PRESET = "electra_small_discriminator_en_uncased"
VOCABULARY = 30522

# Factorised like the small models: 24-wide embeddings projected to 32.
TINY_ELECTRA = dict(num_layers=2, num_heads=2, hidden_dim=32,
                    intermediate_dim=64, embedding_size=24,
                    max_sequence_length=64)


def make_tiny_electra(vocabulary_size=VOCABULARY, **overrides):
    return kzoo.ElectraBackbone(vocabulary_size=vocabulary_size,
                                **{**TINY_ELECTRA, **overrides})


# The odd random checkpoints its parity test (test_electra_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
CONFIGS = {
    # Factorised: 20-wide embeddings projected to 36 (3 heads of 12),
    # tanh GELU, three token types.
    "odd36": dict(vocab_size=99, embedding_size=20, hidden_size=36,
                  num_hidden_layers=2, num_attention_heads=3,
                  intermediate_size=50, max_position_embeddings=40,
                  type_vocab_size=3, layer_norm_eps=1e-7,
                  hidden_act="gelu_new", num_labels=3),
    # No projection (embedding size = hidden = 35, 5 heads of 7), ReLU,
    # one token type, its own classifier dropout.
    "odd35": dict(vocab_size=61, embedding_size=35, hidden_size=35,
                  num_hidden_layers=3, num_attention_heads=5,
                  intermediate_size=9, max_position_embeddings=24,
                  type_vocab_size=1, layer_norm_eps=1e-5, hidden_act="relu",
                  num_labels=5, classifier_dropout=0.3,
                  hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.05),
}


def make_hf_electra(architecture, config_name, seed=0):
    import transformers
    return make_hf_model(transformers.ElectraConfig(**CONFIGS[config_name]),
                         architecture, seed)


def random_inputs(config, batch=3, seq=11, seed=0):
    """Row 1 right-padded, row 2 with a second segment."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, config.vocab_size, (batch, seq)).astype("int32")
    mask = np.ones((batch, seq), "int32")
    mask[1, seq - 4:] = 0
    ids[mask == 0] = 0
    segments = np.zeros((batch, seq), "int32")
    segments[2, 6:] = config.type_vocab_size - 1
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(BERT_LIKE, embedding_size=8,
                                     hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_electra(architecture, "odd36"),
    odd_inputs=lambda config, batch, seq: random_inputs(config, batch=batch,
                                                        seq=seq))
