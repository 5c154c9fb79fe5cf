"""Shared by the MobileBERT tests: the random `transformers` checkpoints of
MobileBERT's released structure, their inputs, and the family's reference
for the tests over every encoder family (tests/family_references.py)."""

import numpy as np

from family_references import Reference
from parity_harness import make_hf_model

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


def make_hf_mobilebert(architecture, config_name, seed=0):
    import transformers
    fields = dict(CONFIGS[config_name])
    if architecture == "MobileBertForQuestionAnswering":
        fields["num_labels"] = 2  # start and end
    return make_hf_model(transformers.MobileBertConfig(**fields),
                         architecture, seed)


def random_inputs(config, batch=3, seq=11, seed=0):
    """Row 1 right-padded, row 2 with a second segment."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(1, config.vocab_size, (batch, seq)).astype("int32")
    mask = np.ones((batch, seq), "int32")
    mask[1, seq - 4:] = 0
    ids[mask == 0] = 0
    segments = np.zeros((batch, seq), "int32")
    segments[2, 6:] = config.type_vocab_size - 1
    return {"token_ids": ids, "segment_ids": segments, "padding_mask": mask}


REFERENCE = Reference(
    # A token table narrower than the blocks, as released (the trigram
    # input widens 3 x 4 to 8; the MLM head adds 8 - 4 rows of its own).
    tiny_config=lambda dropout: dict(
        vocab_size=64, hidden_size=8, embedding_size=4,
        intra_bottleneck_size=8, true_hidden_size=8, num_hidden_layers=1,
        num_attention_heads=2, intermediate_size=16,
        max_position_embeddings=32, hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_mobilebert(architecture,
                                                      "released"),
    odd_inputs=lambda config, batch, seq: random_inputs(config, batch=batch,
                                                        seq=seq))
