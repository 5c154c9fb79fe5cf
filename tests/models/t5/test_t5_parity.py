"""kzoo's T5 against `transformers`' on random checkpoints (a v1.0 and a
v1.1 config): LM logits, encoder outputs (`T5EncoderModel`), conversion
HF -> kzoo -> HF bit-exact, greedy generation token-identical (a short
check by default; the long one is `large`)."""

import copy

import numpy as np
import pytest

import kzoo
from parity_harness import check_exported_weights, hf_forward
from helpers import to_numpy
from kzoo.convert import export_hf
from kzoo.convert.safetensors import load_file
from t5_testing import HF_CONFIGS, make_hf_t5, random_t5_inputs

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")

ATOL = 1e-5


@pytest.fixture(scope="module", params=sorted(HF_CONFIGS))
def pair(request, tmp_path_factory):
    name = request.param
    hf_model = make_hf_t5(name)
    folder = tmp_path_factory.mktemp(f"hf_t5_{name}")
    hf_model.save_pretrained(folder)
    lm = kzoo.T5Seq2SeqLM.from_preset(str(folder), preprocessor=None)
    return name, hf_model, folder, lm


def test_config_read_as_the_original(pair):
    name, hf_model, _, lm = pair
    backbone = lm.backbone
    config = hf_model.config
    assert backbone.tie_word_embeddings == (name == "v1_0")
    assert backbone.gated_feed_forward == (name == "v1_1")
    assert backbone.activation == ("relu" if name == "v1_0" else "gelu_new")
    assert (backbone.key_value_dim, backbone.num_decoder_layers) == \
        (config.d_kv, config.num_decoder_layers)
    assert backbone.relative_attention_num_buckets == \
        config.relative_attention_num_buckets


def test_logits_and_encoder_match_transformers(pair):
    name, hf_model, _, lm = pair
    inputs = random_t5_inputs(HF_CONFIGS[name]["vocab_size"])
    expected = hf_forward(hf_model, inputs)
    logits = to_numpy(lm(inputs, training=False))
    real = inputs["decoder_padding_mask"].astype(bool)
    diff = np.abs(logits - expected.logits.numpy())[real].max()
    print(f"\nT5 {name}: max |logits - transformers| = {diff:.2e}")
    assert diff <= ATOL

    # T5EncoderModel with the same weights: the encoder output.
    # (A copy: T5EncoderModel marks its config as no encoder-decoder.)
    encoder = transformers.T5EncoderModel(
        copy.deepcopy(hf_model.config)).eval()
    encoder.load_state_dict(hf_model.state_dict(), strict=False)
    with torch.no_grad():
        hf_encoder = encoder(
            input_ids=torch.tensor(inputs["encoder_token_ids"]).long(),
            attention_mask=torch.tensor(inputs["encoder_padding_mask"]),
        ).last_hidden_state.numpy()
    outputs = to_numpy(lm.backbone(inputs, training=False))
    real = inputs["encoder_padding_mask"].astype(bool)
    diff = np.abs(outputs["encoder_sequence_output"] - hf_encoder)[real].max()
    print(f"T5 {name}: max |encoder - T5EncoderModel| = {diff:.2e}")
    assert diff <= ATOL
    np.testing.assert_allclose(
        outputs["encoder_sequence_output"][real],
        expected.encoder_last_hidden_state.numpy()[real], atol=ATOL, rtol=0)


def test_round_trip_is_bit_exact(pair, tmp_path):
    name, hf_model, folder, lm = pair
    out = export_hf(lm, tmp_path / "exported", verbose=False)
    check_exported_weights(out, load_file(folder / "model.safetensors"))
    reloaded = transformers.T5ForConditionalGeneration.from_pretrained(
        out).eval()
    inputs = random_t5_inputs(HF_CONFIGS[name]["vocab_size"], seed=3)
    np.testing.assert_array_equal(hf_forward(reloaded, inputs).logits,
                                  hf_forward(hf_model, inputs).logits)
    back = kzoo.T5Seq2SeqLM.from_preset(str(out), preprocessor=None)
    for a, b in zip(back.weights, lm.weights):
        np.testing.assert_array_equal(to_numpy(a), to_numpy(b))


def _greedy_reference(hf_model, sources, new_tokens):
    expected = []
    # One at a time: no padding on either side. transformers' own cache is
    # sized for the encoder's depth and fails on a deeper decoder (the
    # v1.0 config), so its reference decodes without one.
    for source in sources:
        with torch.no_grad():
            ids = hf_model.generate(
                torch.tensor([source]), max_new_tokens=new_tokens,
                do_sample=False, num_beams=1, eos_token_id=None,
                decoder_start_token_id=0, pad_token_id=0, use_cache=False,
                min_new_tokens=new_tokens)[0].tolist()
        expected.append(ids)
    return expected


def _random_sources(name, lengths, seed=7):
    rng = np.random.default_rng(seed)
    vocabulary_size = HF_CONFIGS[name]["vocab_size"]
    return [rng.integers(2, vocabulary_size, n).tolist() + [1]
            for n in lengths]


# The default run decodes a few tokens with the smallest config (its
# decoder is the shallower); `test_greedy_matches_transformers` below
# decodes longer, on both configs, cached and uncached (30-45 s each).
@pytest.mark.parametrize("pair", ["v1_1"], indirect=True)
def test_short_greedy_matches_transformers(pair):
    name, hf_model, _, lm = pair
    sources = _random_sources(name, (4, 9))
    expected = _greedy_reference(hf_model, sources, 5)
    got = lm.generate(sources, max_new_tokens=5, stop_token_ids=None)
    assert got == expected
    assert len({tuple(ids) for ids in got}) == len(got)  # not degenerate


@pytest.mark.large
def test_greedy_matches_transformers(pair):
    name, hf_model, _, lm = pair
    sources = _random_sources(name, (4, 13, 8))
    expected = _greedy_reference(hf_model, sources, 12)
    got = lm.generate(sources, max_new_tokens=12, stop_token_ids=None)
    assert got == expected
    assert len({tuple(ids) for ids in got}) == len(got)  # not degenerate
    assert lm.generate(sources, max_new_tokens=12, stop_token_ids=None,
                       use_cache=False) == got
