"""Shared by the MobileBERT tests: the random `transformers` checkpoints of
MobileBERT's released structure, their inputs, and the family's reference
for the tests over every encoder family (tests/family_references.py)."""

from family_references import Reference
from parity_harness import make_hf_model, random_inputs

CONFIGS = {
    # The release's structure (google/mobilebert-uncased's options: no
    # pooler dense, ReLU, 4 feed-forward networks, hidden dropout 0),
    # narrowed: 12-wide tokens, 16-wide bottlenecks (2 heads of 8), 40
    # between blocks, three token types.
    "released": dict(vocab_size=99, embedding_size=12, hidden_size=40,
                     intra_bottleneck_size=16, true_hidden_size=16,
                     num_hidden_layers=2, num_attention_heads=2,
                     intermediate_size=28, num_feedforward_networks=4,
                     max_position_embeddings=24, type_vocab_size=3,
                     classifier_activation=False, hidden_act="relu",
                     hidden_dropout_prob=0.0, num_labels=3),
    # transformers' default pooler (dense + tanh), two feed-forward
    # networks, 3 heads of 4, GELU, its own classifier dropout.
    "pooled": dict(vocab_size=61, embedding_size=6, hidden_size=18,
                   intra_bottleneck_size=12, true_hidden_size=12,
                   num_hidden_layers=2, num_attention_heads=3,
                   intermediate_size=20, num_feedforward_networks=2,
                   max_position_embeddings=16, type_vocab_size=2,
                   classifier_activation=True, hidden_act="gelu",
                   layer_norm_eps=1e-6, classifier_dropout=0.3,
                   hidden_dropout_prob=0.1, num_labels=2),
}


REFERENCE = Reference(
    # A token table narrower than the blocks, as released (the trigram
    # input widens 3 x 4 to 8; the MLM head adds 8 - 4 rows of its own).
    tiny_config=lambda dropout: dict(
        vocab_size=64, hidden_size=8, embedding_size=4,
        intra_bottleneck_size=8, true_hidden_size=8, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=32, hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["released"]),
    odd_inputs=random_inputs)
