"""RoBERTa test fixtures: a tiny backbone, and the RoBERTa-format tokenizer
of the stand-in preset (GPT-2's real files with fairseq's special ids; see
tests/data/README.md)."""

import pytest

import kzoo
from text_testing import STAND_IN_PRESETS

# The stand-in for the named preset `distil_roberta_base_en`.
ROBERTA_PRESET = str(STAND_IN_PRESETS / "distil_roberta_base_en")
ROBERTA_VOCABULARY = 50262  # 4 specials + GPT-2's 50,257 + <mask>
MASK_ID = 50261

TINY_ROBERTA = dict(num_layers=2, num_heads=2, hidden_dim=32,
                    intermediate_dim=64, max_sequence_length=64)


def make_tiny_roberta(vocabulary_size=ROBERTA_VOCABULARY, **overrides):
    return kzoo.RobertaBackbone(vocabulary_size=vocabulary_size,
                                **{**TINY_ROBERTA, **overrides})


@pytest.fixture(scope="session")
def roberta_tokenizer():
    return kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
