"""guides/adding_a_family.py runs end to end in its smoke mode: a new
family (ToyBERT) defined in the guide from kzoo's shared pieces,
registered in the guide's own process (so kzoo's registries here are
untouched), held to the contracts (argument checks, config round trip,
padding, bad input, preset and .keras round trips, fit on raw text), and
its converter checked against transformers and for bit-exact round
trips. Once per suite (one backend's pass (KZOO_ONCE_BACKEND)): the family's numbers
are checked by the guide itself; the backend adds nothing here that the
families' own tests do not cover."""

import re

import keras
import pytest

from helpers import run_guide_smoke


@pytest.mark.once
def test_guide_smoke_run():
    text = run_guide_smoke("adding_a_family.py", timeout=600)
    tail = text[-3000:]
    # The family's one declaration, read through kzoo.core.families.
    assert "declaration: Family(model_types=('roberta',), " \
        "original_format=None, objectives=('mlm',)) | converter: " \
        "kzoo.models.roberta.convert" in text, tail
    assert "registered tasks: ['RobertaMaskedLM', 'RobertaTextClassifier']" \
        in text
    # The argument checks name the argument and the fix.
    assert "hidden_dim (64) must be divisible by num_heads (3)" in text
    assert "Did you mean 'hidden_dim'?" in text
    assert "registered: ['ToyBertBackbone', 'ToyBertPreprocessor', " \
        "'ToyBertTextClassifier', 'ToyBertMaskedLM']" in text
    assert "config round trip, same outputs: True" in text
    padding = re.search(r"max abs difference on real tokens: (\S+)", text)
    assert padding and float(padding[1]) <= 1e-5, tail
    assert "token_ids holds 30522, outside [0, 30521]" in text
    assert "unexpected: ['segment_ids']" in text
    assert "longer than ToyBertBackbone's max_sequence_length (128)" in text
    assert "preset round trip, bit-exact: True" in text
    assert ".keras round trip, bit-exact: True" in text
    assert re.search(r"trained on \d+ passages: loss \d\.\d{3} -> \d\.\d{3}, "
                     r"held-out accuracy", text), tail
    assert "task preset round trip, same predictions: True" in text
    assert "fill-mask runs: " in text
    # Every layout rule matches weights.
    assert not re.search(r"^  \w+ +0 weights", text, re.M), tail
    # The converter against transformers, and both round trips.
    parity = re.search(r"sequence_output max abs (\S+), pooled_output (\S+)",
                       text)
    assert parity and max(map(float, parity.groups())) <= 1e-5, tail
    assert "HF -> ToyBERT -> HF: 39 tensors, bit-exact: True" in text
    assert "transformers loads the export as BertModel | same outputs: " \
        "True" in text
    assert "ToyBERT -> HF -> ToyBERT: 39 weights, bit-exact: True" in text
    assert "ConversionError: type_vocab_size=2: ToyBERT has one token type" \
        in text
    assert f"{keras.backend.backend()} done" in text
