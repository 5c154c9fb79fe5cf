"""Fixtures of the bad-input suite.

Every case in this folder is "bad input -> a clear error before any work":
it asserts the error's type and a phrase of its message. Models are tiny
(one layer, width 16) and shared (`bad_input_models`); no case trains (a
rejected label never reaches a train step)."""

import pytest

import kzoo
from bad_input_models import shared_backbone, shared_task


@pytest.fixture(scope="session")
def bert_backbone():
    return shared_backbone(kzoo.BertBackbone)


@pytest.fixture(scope="session")
def bert_classifier():
    return shared_task(kzoo.BertTextClassifier, num_classes=3)


@pytest.fixture(scope="session")
def bert_tiny_preset(tmp_path_factory):
    """A saved tiny BERT preset folder (backbone, tokenizer); tests copy it
    before damaging it."""
    folder = tmp_path_factory.mktemp("presets") / "tiny_bert"
    classifier = shared_task(kzoo.BertTextClassifier, num_classes=3)
    classifier.save_to_preset(folder)
    return folder
