"""kzoo's BART against `transformers`' on random checkpoints with odd
configs (unequal encoder and decoder depths, heads and FFN widths; scaled
and unscaled embeddings; exact and tanh GELU): LM logits, encoder and
decoder outputs with padding on both sides within 1e-5; conversion
HF -> kzoo -> HF bit-exact; greedy generation with the KV cache
token-identical to `generate`."""

import numpy as np
import pytest

import kzoo
from bart_testing import HF_CONFIGS, make_hf_bart, random_bart_inputs
from parity_harness import (check_exported_weights, hf_forward,
                            max_abs_differences)
from helpers import to_numpy
from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5


@pytest.fixture(scope="module")
def pairs(tmp_path_factory):
    """name -> (name, transformers model, its folder, kzoo's LM), made on
    first use."""
    made = {}

    def pair(name):
        if name not in made:
            hf_model = make_hf_bart(name)
            folder = tmp_path_factory.mktemp(f"hf_bart_{name}")
            hf_model.save_pretrained(folder)
            lm = kzoo.BartSeq2SeqLM.from_preset(str(folder),
                                                preprocessor=None)
            made[name] = (name, hf_model, folder, lm)
        return made[name]
    return pair


@pytest.fixture(params=sorted(HF_CONFIGS))
def pair(request, pairs):
    return pairs(request.param)


def test_config_read_as_the_original(pair):
    name, hf_model, _, lm = pair
    backbone, config = lm.backbone, hf_model.config
    assert (backbone.num_layers, backbone.num_decoder_layers) == \
        (config.encoder_layers, config.decoder_layers)
    assert (backbone.num_heads, backbone.num_decoder_heads) == \
        (config.encoder_attention_heads, config.decoder_attention_heads)
    assert (backbone.intermediate_dim, backbone.decoder_intermediate_dim) \
        == (config.encoder_ffn_dim, config.decoder_ffn_dim)
    assert backbone.max_sequence_length == config.max_position_embeddings
    assert backbone.scale_embedding == config.scale_embedding
    assert backbone.activation == config.activation_function


def test_outputs_match_transformers(pair):
    name, hf_model, _, lm = pair
    inputs = random_bart_inputs(HF_CONFIGS[name]["vocab_size"])
    expected = hf_forward(hf_model, inputs)
    with torch.no_grad():
        hf_base = hf_model.model(
            input_ids=torch.tensor(inputs["encoder_token_ids"]).long(),
            attention_mask=torch.tensor(inputs["encoder_padding_mask"]),
            decoder_input_ids=torch.tensor(inputs["decoder_token_ids"]).long(),
            decoder_attention_mask=torch.tensor(
                inputs["decoder_padding_mask"]))
    outputs = to_numpy(lm.backbone(inputs, training=False))
    logits = to_numpy(lm(inputs, training=False))
    # Every position, padding included: both sides mask padded keys only.
    differences = max_abs_differences(
        {"encoder": outputs["encoder_sequence_output"],
         "decoder": outputs["decoder_sequence_output"], "logits": logits},
        {"encoder": hf_base.encoder_last_hidden_state.numpy(),
         "decoder": hf_base.last_hidden_state.numpy(),
         "logits": expected.logits.numpy()})
    print(f"\nBART {name}: max abs {differences}")
    for output, difference in differences.items():
        assert difference <= ATOL, (output, difference)


def test_round_trip_is_bit_exact(pair, tmp_path):
    name, hf_model, folder, lm = pair
    out = export_hf(lm, tmp_path / "exported", verbose=False)
    original = load_file(folder / "model.safetensors")
    check_exported_weights(out, original)
    reloaded = transformers.BartForConditionalGeneration.from_pretrained(
        out, attn_implementation="eager").eval()
    inputs = random_bart_inputs(HF_CONFIGS[name]["vocab_size"], seed=3)
    np.testing.assert_array_equal(hf_forward(reloaded, inputs).logits,
                                  hf_forward(hf_model, inputs).logits)
    back = kzoo.BartSeq2SeqLM.from_preset(str(out), preprocessor=None)
    for a, b in zip(back.weights, lm.weights):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def test_backbone_checkpoint_round_trip(tmp_path):
    """A `BartModel` checkpoint (what facebook/bart-base is) loads into
    the backbone and exports back bit for bit; the LM task built on it
    starts `final_logits_bias` at zeros, as transformers does."""
    hf_model = make_hf_bart("odd20", architecture="BartModel")
    hf_model.save_pretrained(tmp_path / "hf")
    backbone = kzoo.BartBackbone.from_preset(str(tmp_path / "hf"))
    out = export_hf(backbone, tmp_path / "exported", verbose=False)
    original = load_file(tmp_path / "hf" / "model.safetensors")
    check_exported_weights(out, original)


# One config in the default run (compiling the loops is most of the time).
@pytest.mark.parametrize("name", [
    "odd24", pytest.param("odd20", marks=pytest.mark.large)])
def test_greedy_matches_transformers(pairs, name):
    name, hf_model, _, lm = pairs(name)
    rng = np.random.default_rng(7)
    vocabulary_size = HF_CONFIGS[name]["vocab_size"]
    # Unequal lengths, each framed <s> ... </s> as BART's encoder reads.
    sources = [[0] + rng.integers(4, vocabulary_size, n).tolist() + [2]
               for n in (3, 12, 7)]
    expected = []
    for source in sources:  # one at a time: no padding in the reference
        with torch.no_grad():
            expected.append(hf_model.generate(
                torch.tensor([source]), max_new_tokens=10, do_sample=False,
                num_beams=1, eos_token_id=None, forced_eos_token_id=None,
                forced_bos_token_id=None, decoder_start_token_id=2,
                pad_token_id=1, min_new_tokens=10)[0].tolist())
    # Neither side applies the checkpoint's settings (BartConfig forces
    # </s> last by default; kzoo reads that into lm.generation_config).
    got = lm.generate(sources, max_new_tokens=10, stop_token_ids=None,
                      generation_config={})
    assert got == expected
    assert len({tuple(ids) for ids in got}) > 1  # the input matters
    assert lm.generate(sources, max_new_tokens=10, stop_token_ids=None,
                       use_cache=False, generation_config={}) == got


def test_mbart_style_checkpoint_is_refused(tmp_path):
    import json
    from kzoo.convert import ConversionError
    hf_model = make_hf_bart("odd20", architecture="BartModel")
    hf_model.save_pretrained(tmp_path / "hf")
    path = tmp_path / "hf" / "config.json"
    config = json.loads(path.read_text())
    path.write_text(json.dumps({**config, "normalize_before": True}))
    with pytest.raises(ConversionError, match="normalize_before=True"):
        kzoo.BartBackbone.from_preset(str(tmp_path / "hf"))
