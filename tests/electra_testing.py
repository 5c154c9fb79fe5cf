"""Shared by the ELECTRA tests (model and conversion): the named preset
whose tokenizer ships offline (bert-base-uncased's vocab.txt) and a tiny
factorised backbone."""

import kzoo

ELECTRA_PRESET = "electra_small_discriminator_en_uncased"
VOCABULARY = 30522

# Factorised like the small models: 24-wide embeddings projected to 32.
TINY_ELECTRA = dict(num_layers=2, num_heads=2, hidden_dim=32,
                    intermediate_dim=64, embedding_size=24,
                    max_sequence_length=64)


def make_tiny_electra(vocabulary_size=VOCABULARY, **overrides):
    return kzoo.ElectraBackbone(vocabulary_size=vocabulary_size,
                                **{**TINY_ELECTRA, **overrides})
