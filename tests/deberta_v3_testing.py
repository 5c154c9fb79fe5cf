"""Shared by the DeBERTa-v3 tests (model and conversion): the stand-in
preset (the named preset's config with sentencepiece's Botchan test model
as spm.model; see tests/data/README.md), hard strings, a tiny backbone."""

import kzoo
from text_testing import STAND_IN_PRESETS

DEBERTA_PRESET = str(STAND_IN_PRESETS / "deberta_v3_extra_small_en")
SPM_MODEL = STAND_IN_PRESETS / "deberta_v3_extra_small_en" / "spm.model"
# Botchan's 1000 pieces, then the specials it lacks, as transformers
# appends them: [CLS] [SEP] [UNK] [PAD] [MASK].
VOCABULARY = 1005
CLS_ID, SEP_ID, UNK_ID, PAD_ID, MASK_ID = 1000, 1001, 1002, 1003, 1004

# Strings where tokenizers differ when they differ at all (characters a
# compatibility normalisation changes are tested separately).
HARD_TEXTS = [
    "Hello world",
    "The [MASK] sat on the mat.",
    "a[MASK]b [MASK][MASK]  \t[MASK]",
    "Ünïcödé: café, naïve, résumé, Ångström",
    "e\u0301 combining accents compose (NFC)",
    "日本語のテキスト and 中文 mixed in",
    "emoji 🙂 👨‍👩‍👧 🇫🇷 flags",
    "   whitespace    runs \n\n\t between  \r\n words   ",
    "[CLS]typed[SEP] specials [PAD] [UNK] stay whole",
    "<s>control</s> pieces stay whole too",
    "don't 'told you I'll they're",
    "trailing [SEP]   ",
    "",
    " ",
    "numbers 1234567 3.14159 and symbols @#$%^&*()",
]

TINY_DEBERTA = dict(num_layers=2, num_heads=2, hidden_dim=32,
                    intermediate_dim=64, max_sequence_length=64,
                    position_buckets=8, max_relative_positions=16)


def make_tiny_deberta(vocabulary_size=VOCABULARY, **overrides):
    return kzoo.DebertaV3Backbone(vocabulary_size=vocabulary_size,
                                  **{**TINY_DEBERTA, **overrides})
