"""Shared by the ALBERT tests (model and conversion): the stand-in preset
(albert_base_en_uncased's config with an ALBERT-layout SentencePiece
model built from a real one; see tests/data/README.md), hard strings, a
tiny backbone."""

import kzoo
from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model, random_inputs
from text_testing import STAND_IN_PRESETS

ALBERT_PRESET = str(STAND_IN_PRESETS / "albert_base_en_uncased")
ALBERT_SPM = f"{ALBERT_PRESET}/spiece.model"
ALBERT_VOCABULARY = 1002  # ALBERT's 5 pieces + Botchan's 997
SPECIAL_IDS = {"<pad>": 0, "<unk>": 1, "[CLS]": 2, "[SEP]": 3, "[MASK]": 4}

# Strings where tokenizers differ when they differ at all.
HARD_TEXTS = [
    "Hello world",
    "The [MASK] sat on the mat.",
    "a[MASK]b  [MASK][MASK]  \t[MASK]",
    "Ünïcödé: café, naïve, résumé, Ångström",
    "日本語のテキスト and 中文 mixed in",
    "emoji 🙂 👨‍👩‍👧 🇫🇷 flags",
    "   whitespace    runs \n\n\t between  \r\n words   ",
    "[CLS] typed [SEP] specials <pad> <unk> stay whole",
    "``quoted'' and 'single' quotes, don't",
    "UPPER lower MiXeD",
    "\u3000full\u00a0width\u2003spaces ＡＢＣ ½ ﬁ",
    "",
    " ",
    "numbers 1234567 3.14159 and symbols @#$%^&*()",
]

# The released layout (one block, run by every layer), small: the tasks'
# tests use it (each block call costs compile time on every backend).
TINY_ALBERT = dict(num_layers=2, num_heads=3, hidden_dim=24,
                   intermediate_dim=40, embedding_dim=10, num_groups=1,
                   num_inner_repetitions=1, max_sequence_length=64)
# Two groups of two distinct blocks, run by five layers (groups 0, 0, 0,
# 1, 1: the original's float division): the backbone's tests.
GROUPED = dict(num_layers=5, num_groups=2, num_inner_repetitions=2)


def make_tiny_albert(vocabulary_size=ALBERT_VOCABULARY, **overrides):
    return kzoo.AlbertBackbone(vocabulary_size=vocabulary_size,
                               **{**TINY_ALBERT, **overrides})


# The odd random checkpoints its parity test (test_albert_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
CONFIGS = {
    # 2 groups x 2 inner layers over 5 layers (groups 0,0,0,1,1), 3 heads
    # of 12, embeddings 10 wide, tanh GELU.
    "groups": dict(vocab_size=99, embedding_size=10, hidden_size=36,
                   num_hidden_layers=5, num_hidden_groups=2,
                   inner_group_num=2, num_attention_heads=3,
                   intermediate_size=50, max_position_embeddings=40,
                   type_vocab_size=2, layer_norm_eps=1e-7,
                   hidden_act="gelu_new", num_labels=3),
    # One shared block run 3 times (the released layout), 5 heads of 7,
    # exact GELU, three token types, its own classifier dropout.
    "shared": dict(vocab_size=61, embedding_size=14, hidden_size=35,
                   num_hidden_layers=3, num_hidden_groups=1,
                   inner_group_num=1, num_attention_heads=5,
                   intermediate_size=9, max_position_embeddings=24,
                   type_vocab_size=3, layer_norm_eps=1e-5,
                   hidden_act="gelu", num_labels=5,
                   classifier_dropout_prob=0.3, hidden_dropout_prob=0.2,
                   attention_probs_dropout_prob=0.05),
}


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(BERT_LIKE, embedding_size=4,
                                     hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["groups"]),
    odd_inputs=random_inputs)
