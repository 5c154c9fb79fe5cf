"""Shared by the RoBERTa tests (model and conversion): the stand-in preset
with a RoBERTa-format tokenizer (GPT-2's real files with fairseq's special
ids; see tests/data/README.md), hard strings, a tiny backbone."""

import kzoo
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
