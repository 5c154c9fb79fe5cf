"""The Backbone base assumes no token ids, vocabulary or transformer shape:
a backbone that reads characters (as ELMo does) gets the input checks,
config and presets of every other backbone from the base alone."""

import keras
import numpy as np
import pytest
from keras import ops

from kzoo.core import registry
from kzoo.core.arguments import POSITIVE_INT, ArgumentError
from kzoo.core.backbone import Backbone

from helpers import check_backbone


class CharacterBackbone(Backbone):
    """Word vectors from character ids: embed each character, average the
    characters of a token, project. No `token_ids`, no vocabulary, no
    `get_config` and no config block: the base provides them."""

    input_names = ("character_ids", "padding_mask")
    input_axes = {"character_ids": ("batch", "sequence", "characters")}
    family = "characters"
    argument_spec = {"num_characters": POSITIVE_INT,
                     "hidden_dim": POSITIVE_INT}

    def __init__(self, num_characters, hidden_dim, dtype=None, **kwargs):
        embedding = keras.layers.Embedding(
            num_characters, hidden_dim, dtype=dtype, name="char_embedding")
        projection = keras.layers.Dense(
            hidden_dim, dtype=dtype, name="projection")
        character_ids = keras.Input((None, None), dtype="int32",
                                    name="character_ids")
        padding_mask = keras.Input((None,), dtype="int32",
                                   name="padding_mask")
        words = ops.mean(embedding(character_ids), axis=2)
        mask = ops.expand_dims(ops.cast(padding_mask, words.dtype), -1)
        outputs = projection(words) * mask
        super().__init__(
            inputs={"character_ids": character_ids,
                    "padding_mask": padding_mask},
            outputs=outputs, dtype=dtype, **kwargs)

    def id_limits(self):
        return {"character_ids": self.num_characters}


@pytest.fixture
def character_backbone(monkeypatch):
    # Registered for this test only: the bad-input suite parametrises over
    # every registered backbone.
    monkeypatch.setitem(registry._CLASSES, "CharacterBackbone",
                        CharacterBackbone)
    return CharacterBackbone(num_characters=20, hidden_dim=8)


def character_inputs(batch=3, seq=5, characters=4):
    rng = np.random.default_rng(0)
    return {"character_ids": rng.integers(0, 20, (batch, seq, characters),
                                          dtype="int32"),
            "padding_mask": np.ones((batch, seq), "int32")}


def test_character_backbone_passes_the_backbone_contract(
        character_backbone, tmp_path):
    assert character_backbone.num_characters == 20  # recorded argument
    assert character_backbone.get_config()["hidden_dim"] == 8
    assert character_backbone.max_sequence_length is None
    check_backbone(character_backbone, character_inputs(), tmp_path,
                   expected_shapes=(3, 5, 8))


def test_character_backbone_input_checks(character_backbone):
    inputs = character_inputs()
    flat = {**inputs, "character_ids": inputs["character_ids"][:, :, 0]}
    with pytest.raises(ValueError, match=r"`character_ids` must be 3-D "
                       r"\(batch, sequence, characters\)"):
        character_backbone(flat)
    too_big = {**inputs, "character_ids": inputs["character_ids"] + 20}
    with pytest.raises(ValueError, match=r"character_ids holds \d+, outside "
                       r"\[0, 19\]"):
        character_backbone(too_big)
    shorter = {**inputs, "padding_mask": inputs["padding_mask"][:, :4]}
    with pytest.raises(ValueError, match="batch and sequence length"):
        character_backbone(shorter)


def test_constructor_arguments_are_checked_and_numpy_scalars_accepted():
    with pytest.raises(ArgumentError, match="hidden_dim"):
        CharacterBackbone(num_characters=20, hidden_dim=0)
    backbone = CharacterBackbone(num_characters=np.int64(20),
                                 hidden_dim=np.int32(8))
    config = backbone.get_config()
    assert type(config["num_characters"]) is int
    assert type(config["hidden_dim"]) is int
