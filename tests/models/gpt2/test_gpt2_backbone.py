"""GPT2Backbone: the shared backbone contract, causality, the key/value
cache, bad input and the named presets."""

import numpy as np
import pytest

import kzoo
from gpt2_testing import TINY_GPT2, tiny_backbone
from helpers import check_backbone, check_preset, to_numpy

VOCAB = TINY_GPT2["vocabulary_size"]


def random_inputs(batch=3, seq=10, seed=0):
    rng = np.random.default_rng(seed)
    token_ids = rng.integers(0, VOCAB, (batch, seq)).astype("int32")
    padding_mask = np.ones((batch, seq), "int32")
    padding_mask[1, seq - 3:] = 0  # right padding
    return {"token_ids": token_ids, "padding_mask": padding_mask}


@pytest.fixture
def backbone():
    return tiny_backbone()


def test_backbone_contract(backbone, tmp_path):
    check_backbone(backbone, random_inputs(), tmp_path, lengths=[1, 64],
                   expected_shapes=(3, 10, 32))


def test_causal(backbone):
    # Changing a token changes nothing before it, and something after it.
    inputs = random_inputs()
    out = to_numpy(backbone(inputs, training=False))
    changed = {k: v.copy() for k, v in inputs.items()}
    changed["token_ids"][:, 6] = (changed["token_ids"][:, 6] + 1) % VOCAB
    out2 = to_numpy(backbone(changed, training=False))
    np.testing.assert_allclose(out2[:, :6], out[:, :6], atol=1e-6)
    assert not np.allclose(out2[:, 6:], out[:, 6:])


def test_padding_does_not_change_real_tokens(backbone):
    inputs = random_inputs()
    out = to_numpy(backbone(inputs, training=False))
    changed = {k: v.copy() for k, v in inputs.items()}
    changed["token_ids"][1, -3:] = [5, 6, 7]
    out2 = to_numpy(backbone(changed, training=False))
    np.testing.assert_allclose(out2[1, :-3], out[1, :-3], atol=1e-6)


def test_cache_matches_full_forward(backbone):
    # Prefill 4 positions, then one position at a time: the same hidden
    # states as one parallel forward pass.
    inputs = random_inputs(batch=2, seq=9)
    inputs["padding_mask"][:] = 1
    full = to_numpy(backbone(inputs, training=False))
    ids = inputs["token_ids"]
    cache = backbone.init_cache(2, 12)
    hidden, cache = backbone.call_with_cache(ids[:, :4], cache, 0)
    steps = [to_numpy(hidden)]
    for index in range(4, 9):
        hidden, cache = backbone.call_with_cache(ids[:, index:index + 1],
                                                 cache, index)
        steps.append(to_numpy(hidden))
    np.testing.assert_allclose(np.concatenate(steps, axis=1), full,
                               atol=1e-5)


def test_get_config_is_complete(backbone):
    config = backbone.get_config()
    for key in ("vocabulary_size", "num_layers", "num_heads", "hidden_dim",
                "intermediate_dim", "dropout", "attention_dropout",
                "max_sequence_length", "activation", "layer_norm_epsilon",
                "initializer_range"):
        assert key in config
    assert config["activation"] == "gelu_new"
    assert config["layer_norm_epsilon"] == 1e-5


def test_bad_inputs(backbone):
    inputs = random_inputs(seq=65)  # the position table holds 64
    with pytest.raises(ValueError, match="longer than"):
        backbone(inputs)
    inputs = random_inputs()
    inputs["token_ids"][0, 0] = VOCAB
    with pytest.raises(ValueError, match="outside"):
        backbone(inputs)
    with pytest.raises(ValueError, match="padding_mask"):
        backbone({"token_ids": inputs["token_ids"]})


def gpt2_parameter_count(config):
    """GPT2Backbone's parameter count from its config."""
    h, i = config["hidden_dim"], config["intermediate_dim"]
    block = 4 * h + 4 * (h * h + h) + (h * i + i) + (i * h + h)
    return ((config["vocabulary_size"] + config["max_sequence_length"]) * h
            + config["num_layers"] * block + 2 * h)


def test_named_presets(backbone):
    # The formula is right (on a built model)...
    assert gpt2_parameter_count(backbone.get_config()) == \
        backbone.count_params()
    # ...and every preset's metadata agrees with its config. (Building the
    # real sizes would take seconds to minutes; the preset script builds
    # the smaller two when it writes them.)
    sizes = {}
    for name in ("gpt2_base_en", "gpt2_medium_en", "gpt2_large_en",
                 "gpt2_extra_large_en"):
        preset = check_preset(name, kzoo.GPT2Backbone, kzoo.GPT2Tokenizer,
                              build=False)
        config = preset.json("config.json")["config"]
        assert gpt2_parameter_count(config) == preset.metadata["params"]
        assert kzoo.GPT2Backbone.from_config(
            {**config, "num_layers": 1, "hidden_dim": 8, "num_heads": 2,
             "intermediate_dim": 8, "vocabulary_size": 10,
             "max_sequence_length": 8}).get_config()["activation"] == \
            "gelu_new"
        sizes[name] = preset.metadata["params"]
    assert kzoo.presets.resolve("gpt2").name == "gpt2_base_en"
    assert sizes == {"gpt2_base_en": 124439808, "gpt2_medium_en": 354823168,
                     "gpt2_large_en": 774030080,
                     "gpt2_extra_large_en": 1557611200}
    listed = {row["name"] for row in kzoo.presets.list(family="gpt2")}
    assert listed == set(sizes)
