"""RoBERTa test fixtures (see roberta_testing.py)."""

import pytest

import kzoo
from roberta_testing import ROBERTA_PRESET


@pytest.fixture(scope="session")
def roberta_tokenizer():
    return kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
