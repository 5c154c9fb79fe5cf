"""Shared by the DistilBERT tests (model and conversion): a tiny backbone
and hard strings for the tokenizer."""

import kzoo
from family_references import Reference
from parity_harness import make_hf_model, random_inputs

PRESET = "distil_bert_base_en_uncased"
VOCABULARY = 30522

# Strings where WordPiece tokenizers differ when they differ at all.
HARD_TEXTS = [
    "Hello world",
    "The [MASK] sat on the mat.",
    "a[MASK]b [MASK][MASK]  \t[MASK]",
    "Ünïcödé: café, naïve, résumé, Ångström",
    "日本語のテキスト and 中文 mixed in",
    "emoji 🙂 👨‍👩‍👧 🇫🇷 flags",
    "   whitespace    runs \n\n\t between  \r\n words   ",
    "[CLS]typed[SEP] specials [PAD] [UNK] stay whole",
    "don't 'told you I'll they're",
    "\u3000unicode\u00a0spaces\u2003here ½ ～",
    "",
    " ",
    "numbers 1234567 3.14159 and symbols @#$%^&*()",
    "unaffable supercalifragilisticexpialidocious",
]

TINY_DISTIL_BERT = dict(num_layers=2, num_heads=2, hidden_dim=32,
                        intermediate_dim=64, max_sequence_length=64)


def make_tiny_distil_bert(vocabulary_size=VOCABULARY, **overrides):
    return kzoo.DistilBertBackbone(vocabulary_size=vocabulary_size,
                                   **{**TINY_DISTIL_BERT, **overrides})


# The odd random checkpoints its parity test (test_distil_bert_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
CONFIGS = {
    # head_dim 12 with 3 heads, tanh GELU, 40 positions.
    "odd36": dict(vocab_size=99, dim=36, n_layers=2, n_heads=3,
                  hidden_dim=50, max_position_embeddings=40,
                  activation="gelu_new", num_labels=3),
    # 5 heads of 7, ReLU, the fixed sinusoidal table, odd dropouts.
    "odd35": dict(vocab_size=61, dim=35, n_layers=3, n_heads=5,
                  hidden_dim=9, max_position_embeddings=24,
                  activation="relu", num_labels=5, sinusoidal_pos_embds=True,
                  seq_classif_dropout=0.3, dropout=0.2,
                  attention_dropout=0.05),
}


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(
        vocab_size=64, dim=8, n_layers=1, n_heads=2, hidden_dim=16,
        max_position_embeddings=32, dropout=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd36"]),
    odd_inputs=random_inputs)
