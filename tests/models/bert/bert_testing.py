"""Shared BERT test data beyond tests/helpers.py (whose tiny BERT every
family's tests use): BERT's `transformers` reference for the tests over
every encoder family (tests/family_references.py)."""

from convert_helpers import make_hf_bert
from family_references import Reference
from parity_harness import random_inputs

# A tiny config's fields, the hidden dropout the caller's: the encoder
# families' tiny references start from these (BERT's names).
BERT_LIKE = dict(vocab_size=64, hidden_size=8, num_hidden_layers=1,
                 num_attention_heads=2, intermediate_size=16,
                 max_position_embeddings=32)

REFERENCE = Reference(
    tiny_config=lambda dropout: dict(BERT_LIKE, hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_bert(architecture, "odd36"),
    odd_inputs=random_inputs)
