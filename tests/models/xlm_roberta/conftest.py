"""XLM-R test fixtures (see xlm_roberta_testing.py)."""

import pytest

import kzoo
from xlm_roberta_testing import XLMR_PRESET, hf_reference_tokenizer


@pytest.fixture(scope="session")
def xlmr_tokenizer():
    return kzoo.XLMRobertaTokenizer.from_preset(str(XLMR_PRESET))


@pytest.fixture(scope="session")
def reference(tmp_path_factory):
    """transformers' XLMRobertaTokenizer of the same SentencePiece model."""
    pytest.importorskip("transformers")
    return hf_reference_tokenizer(tmp_path_factory.mktemp("hf_xlmr"))
