"""A conversion builds its model without drawing random initial values when
the checkpoint fills every weight (the draws are thrown away by the load),
and draws them as before when it does not: a weight the checkpoint lacks
starts random, never at zeros."""

import keras
import numpy as np
import pytest

import kzoo
from kzoo.convert import hf_to_preset

from convert_helpers import make_hf_bert, save_hf

pytestmark = pytest.mark.once


@pytest.fixture
def draws(monkeypatch):
    """How many truncated-normal initial values were drawn (BERT's
    kernels and embeddings use them)."""
    calls = []
    original = keras.initializers.TruncatedNormal.__call__

    def counting(self, *args, **kwargs):
        calls.append(1)
        return original(self, *args, **kwargs)
    monkeypatch.setattr(keras.initializers.TruncatedNormal, "__call__",
                        counting)
    return calls


def test_a_checkpoint_with_every_weight_draws_none(tmp_path, draws):
    hf = save_hf(make_hf_bert("BertModel"), tmp_path / "hf")
    hf_to_preset(hf, tmp_path / "preset", task="backbone", verbose=False)
    assert draws == []
    # And every weight is the checkpoint's (the parity tests check values).
    backbone = kzoo.BertBackbone.from_preset(tmp_path / "preset")
    pooler = backbone.get_layer("pooler").kernel
    assert float(np.std(keras.ops.convert_to_numpy(pooler))) > 0.1


def test_a_weight_the_checkpoint_lacks_starts_random(tmp_path, draws):
    # A masked-LM checkpoint has no pooler.
    hf = save_hf(make_hf_bert("BertForMaskedLM"), tmp_path / "hf")
    hf_to_preset(hf, tmp_path / "preset", task="backbone", verbose=False)
    assert draws  # built again, drawing as `build` does
    backbone = kzoo.BertBackbone.from_preset(tmp_path / "preset")
    pooler = keras.ops.convert_to_numpy(backbone.get_layer("pooler").kernel)
    # BERT's initializer: truncated normal, stddev 0.02.
    assert 0.01 < float(np.std(pooler)) < 0.03
