"""Shared by the DistilBERT tests (model and conversion): a tiny backbone
and hard strings for the tokenizer."""

import kzoo

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
