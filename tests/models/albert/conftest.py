"""ALBERT test fixtures (see albert_testing.py)."""

import pytest

import kzoo
from albert_testing import ALBERT_PRESET


@pytest.fixture(scope="session")
def albert_tokenizer():
    return kzoo.AlbertTokenizer.from_preset(ALBERT_PRESET)
