"""Shared by the ELECTRA tests (model and conversion): the named preset
whose tokenizer ships offline (bert-base-uncased's vocab.txt) and a tiny
factorised backbone."""

import kzoo
from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model, random_inputs

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


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(BERT_LIKE, embedding_size=8,
                                     hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd36"]),
    odd_inputs=random_inputs)
