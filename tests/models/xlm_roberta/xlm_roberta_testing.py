"""Shared by the XLM-R tests (model and conversion): the stand-in preset
with a real SentencePiece model in XLM-R's place (see
tests/data/README.md), transformers' tokenizer of the same file, hard
strings, a tiny backbone."""

import shutil

import kzoo
from family_references import Reference
from parity_harness import make_hf_model, random_inputs
from roberta_testing import (HARD_TEXTS as ROBERTA_HARD_TEXTS,
                             REFERENCE as ROBERTA_REFERENCE)
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


# The odd random checkpoints its parity test (test_xlm_roberta_parity.py)
# and the tests over every encoder family convert (transformers and torch
# imported when one is made: the family's other tests need neither).
CONFIGS = {
    # 3 heads of 13, tanh GELU, 29 positions after the padding index.
    "odd39": dict(vocab_size=83, hidden_size=39, num_hidden_layers=2,
                  num_attention_heads=3, intermediate_size=45,
                  max_position_embeddings=31, type_vocab_size=1,
                  layer_norm_eps=1e-6, hidden_act="gelu_new", num_labels=3,
                  pad_token_id=1),
    # 7 heads of 5, ReLU, padding index 2, its own classifier dropout.
    "odd35": dict(vocab_size=57, hidden_size=35, num_hidden_layers=3,
                  num_attention_heads=7, intermediate_size=11,
                  max_position_embeddings=21, type_vocab_size=1,
                  layer_norm_eps=1e-5, hidden_act="relu", num_labels=4,
                  pad_token_id=2, classifier_dropout=0.25,
                  hidden_dropout_prob=0.15),
}


# RoBERTa's tiny config and inputs, its own odd checkpoint.
REFERENCE = Reference(
    tiny_config=ROBERTA_REFERENCE.tiny_config,
    odd_model=lambda architecture: make_hf_model(architecture,
                                                 CONFIGS["odd39"]),
    odd_inputs=random_inputs)
