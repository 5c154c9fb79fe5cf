"""Shared by the DeBERTa-v3 tests (model and conversion): the stand-in
preset (the named preset's config with sentencepiece's Botchan test model
as spm.model; see tests/data/README.md), hard strings, a tiny backbone."""

import kzoo
from bert_testing import BERT_LIKE
from family_references import Reference
from parity_harness import make_hf_model, random_inputs
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


# The odd random checkpoints its parity test (test_deberta_v3_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
V3 = dict(relative_attention=True, position_biased_input=False,
          type_vocab_size=0, norm_rel_ebd="layer_norm",
          pos_att_type="p2c|c2p")
CONFIGS = {
    # 5 heads of 7, v3's layout (share_att_key) with 8 buckets reaching
    # 16 positions.
    "odd35": dict(V3, vocab_size=71, hidden_size=35, num_hidden_layers=2,
                  num_attention_heads=5, intermediate_size=23,
                  max_position_embeddings=64, position_buckets=8,
                  max_relative_positions=16, share_att_key=True,
                  layer_norm_eps=1e-6, hidden_act="gelu", num_labels=3),
    # 3 heads of 12, separate pos_key/pos_query projections, no buckets
    # (12 relative positions each way, clipped), tanh GELU, the original
    # MLM head's names (legacy false), its own pooler and classifier
    # dropouts.
    "odd36": dict(V3, vocab_size=53, hidden_size=36, num_hidden_layers=3,
                  num_attention_heads=3, intermediate_size=50,
                  max_position_embeddings=48, position_buckets=-1,
                  max_relative_positions=12, share_att_key=False,
                  layer_norm_eps=1e-7, hidden_act="gelu_new", num_labels=4,
                  legacy=False, pooler_dropout=0.2, cls_dropout=0.3),
}


REFERENCE = Reference(
    tiny_config=lambda dropout: dict(
        BERT_LIKE, relative_attention=True, position_biased_input=False,
        pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
        position_buckets=8, norm_rel_ebd="layer_norm", share_att_key=True,
        type_vocab_size=0, hidden_dropout_prob=dropout),
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd36"]),
    odd_inputs=random_inputs)
