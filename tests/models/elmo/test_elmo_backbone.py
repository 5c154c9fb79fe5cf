"""ElmoBackbone on a tiny config of its own: the backbone contract, input
checks, the stateful mode's arguments, and the named presets."""

import numpy as np
import pytest

import kzoo
from elmo_testing import TINY_ELMO, character_batch
from helpers import check_backbone, check_preset, to_numpy
from kzoo.core.arguments import ArgumentError
from kzoo.presets import MissingWeightsError


def tiny_inputs():
    return character_batch([["Hello", "there", "!"], ["Ünïcödé"]], 6)


def test_backbone_contract(tmp_path):
    backbone = kzoo.ElmoBackbone(**TINY_ELMO)
    check_backbone(backbone, tiny_inputs(), tmp_path,
                   expected_shapes={"sequence_output": (2, 6, 12),
                                    "layer_outputs": (2, 6, 3, 12)})
    assert backbone.output_dim == 12


def test_padding_tokens_output_zeros():
    out = to_numpy(kzoo.ElmoBackbone(**TINY_ELMO)(tiny_inputs()))
    assert np.all(out["layer_outputs"][1, 3:] == 0.0)  # 3 real tokens
    assert np.all(np.any(out["layer_outputs"][1, :3] != 0.0, axis=-1))


def test_arguments_are_checked():
    with pytest.raises(ArgumentError, match="filters must be"):
        kzoo.ElmoBackbone(**{**TINY_ELMO, "filters": [[0, 4]]})
    with pytest.raises(ArgumentError, match="wider than a token"):
        kzoo.ElmoBackbone(**{**TINY_ELMO, "filters": [[60, 4]]})
    with pytest.raises(ArgumentError, match="stateful=True .* needs "
                       "batch_size"):
        kzoo.ElmoBackbone(**TINY_ELMO, stateful=True)
    with pytest.raises(ArgumentError, match="cnn_activation"):
        kzoo.ElmoBackbone(**{**TINY_ELMO, "cnn_activation": "gelu"})


def test_stateful_batch_size_is_checked():
    backbone = kzoo.ElmoBackbone(**TINY_ELMO, stateful=True, batch_size=3)
    with pytest.raises(ValueError, match="stateful with batch_size=3.*got 2"):
        backbone(tiny_inputs())


@pytest.mark.parametrize("name", ["elmo_small_en", "elmo_medium_en",
                                  "elmo_original_en"])
def test_named_presets(name):
    # The original's 93.6M parameters are counted, not built, here.
    preset = check_preset(name, kzoo.ElmoBackbone,
                          build=name == "elmo_small_en")
    config = preset.json("config.json")["config"]
    assert config["filters"] == [[1, 32], [2, 32], [3, 64], [4, 128],
                                 [5, 256], [6, 512], [7, 1024]]
    assert (config["characters_per_token"], config["num_characters"],
            config["character_embedding_dim"]) == (50, 262, 16)
    sizes = {"elmo_small_en": (1024, 128, 1), "elmo_medium_en": (2048, 256, 1),
             "elmo_original_en": (4096, 512, 2)}[name]
    assert (config["lstm_dim"], config["projection_dim"],
            config["num_highway"]) == sizes
    # Weights are remote and cannot be fetched for you: the error says how.
    with pytest.raises(MissingWeightsError, match="kzoo convert"):
        kzoo.ElmoBackbone.from_preset(name)
