"""Shared by the RoBERTa tests (model and conversion): the stand-in preset
with a RoBERTa-format tokenizer (GPT-2's real files with fairseq's special
ids; see tests/data/README.md), hard strings, a tiny backbone."""

import kzoo
from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model, random_inputs
from text_testing import STAND_IN_PRESETS

# The stand-in for the named preset `distil_roberta_base_en`.
ROBERTA_PRESET = str(STAND_IN_PRESETS / "distil_roberta_base_en")
ROBERTA_VOCABULARY = 50262  # 4 specials + GPT-2's 50,257 + <mask>
MASK_ID = 50261

# Strings where tokenizers differ when they differ at all.
HARD_TEXTS = [
    "Hello world",
    "The <mask> sat on the mat.",
    "a<mask>b <mask><mask>  \t<mask>",  # <mask> swallows the space before
    "Ünïcödé: café, naïve, résumé, Ångström",
    "日本語のテキスト and 中文 mixed in",
    "emoji 🙂 👨‍👩‍👧 🇫🇷 flags",
    "   whitespace    runs \n\n\t between  \r\n words   ",
    "<s>typed</s> specials <pad> <unk> stay whole",
    "don't 'told you I'll they're",
    "<|endoftext|> is just text to RoBERTa",
    "\u3000<mask>\u00a0unicode spaces\u2003<mask>",
    "",
    " ",
    "numbers 1234567 3.14159 and symbols @#$%^&*()",
]

TINY_ROBERTA = dict(num_layers=2, num_heads=2, hidden_dim=32,
                    intermediate_dim=64, max_sequence_length=64)


def make_tiny_roberta(vocabulary_size=ROBERTA_VOCABULARY, **overrides):
    return kzoo.RobertaBackbone(vocabulary_size=vocabulary_size,
                                **{**TINY_ROBERTA, **overrides})


# The odd random checkpoints its parity test (test_roberta_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
CONFIGS = {
    # head_dim 12 with 3 heads, tanh GELU, 37 positions after the padding
    # index.
    "odd36": dict(vocab_size=99, hidden_size=36, num_hidden_layers=2,
                  num_attention_heads=3, intermediate_size=50,
                  max_position_embeddings=40, type_vocab_size=1,
                  layer_norm_eps=1e-7, hidden_act="gelu_new", num_labels=3,
                  pad_token_id=1),
    # 5 heads of 7, ReLU, padding index 3, its own classifier dropout.
    "odd35": dict(vocab_size=61, hidden_size=35, num_hidden_layers=3,
                  num_attention_heads=5, intermediate_size=9,
                  max_position_embeddings=24, type_vocab_size=1,
                  layer_norm_eps=1e-5, hidden_act="relu", num_labels=5,
                  pad_token_id=3, classifier_dropout=0.3,
                  hidden_dropout_prob=0.2, attention_probs_dropout_prob=0.05),
}


# RoBERTa numbers positions after its padding index: 2 more rows.
TINY_HF_CONFIG = dict(BERT_LIKE, max_position_embeddings=34,
                      type_vocab_size=1)
REFERENCE = Reference(
    tiny_config=lambda dropout: dict(TINY_HF_CONFIG,
                                     hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd36"]),
    odd_inputs=random_inputs)
