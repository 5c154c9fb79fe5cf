"""Shared by the XLM-R tests (model and conversion): the stand-in preset
with a real SentencePiece model in XLM-R's place (see
tests/data/README.md), transformers' tokenizer of the same file, hard
strings, a tiny backbone."""

import shutil

import kzoo
from roberta_testing import HARD_TEXTS as ROBERTA_HARD_TEXTS
from text_testing import STAND_IN_PRESETS

# The stand-in for the named preset `xlm_roberta_base_multi`.
XLMR_PRESET = STAND_IN_PRESETS / "xlm_roberta_base_multi"
SPM_MODEL = XLMR_PRESET / "sentencepiece.bpe.model"
XLMR_VOCABULARY = 1002  # <s> <pad> </s> <unk>, 997 pieces, <mask>
MASK_ID = 1001

# RoBERTa's hard strings, and what SentencePiece's normalization meets.
HARD_TEXTS = ROBERTA_HARD_TEXTS + [
    "I was  born\r\nthere.\u2028Then\u00a0left",
    "ｆｕｌｌ　ｗｉｄｔｈ ＡＢＣ ①②",  # NFKC rewrites these
    "e\u0301 vs \u00e9, \u200bzero\u200bwidth \ufeffbom",
    "<mask><s></s> <s>  <mask>  </s>",
    "a\x00b <mask>",
    "It is a truth universally acknowledged, that a single man",
]

TINY_XLMR = dict(num_layers=2, num_heads=2, hidden_dim=32,
                 intermediate_dim=64, max_sequence_length=64)


def make_tiny_xlmr(vocabulary_size=XLMR_VOCABULARY, **overrides):
    return kzoo.XLMRobertaBackbone(vocabulary_size=vocabulary_size,
                                   **{**TINY_XLMR, **overrides})


def hf_reference_tokenizer(folder):
    """transformers' XLMRobertaTokenizer built from the stand-in's
    SentencePiece model alone (as from a checkpoint with no tokenizer.json:
    transformers converts the model itself)."""
    import transformers
    transformers.logging.set_verbosity_error()
    folder.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(SPM_MODEL, folder / "sentencepiece.bpe.model")
    return transformers.XLMRobertaTokenizer.from_pretrained(folder)
