"""ELMo through kzoo's converter against the original TensorFlow biLM's
own outputs (allennlp's fixture): the same 10 batches of 3, `<S>`/`</S>`
added, the LSTM states carried from batch to batch (the original is
stateful), the top layer compared without the boundary tokens."""

import h5py
import keras
import numpy as np
import pytest

import kzoo
from elmo_testing import (ELMO_DIR, character_batch, original_outputs,
                          original_sentences)
from helpers import assert_all_close, to_numpy
from kzoo.convert import ConversionError
from kzoo.models.elmo.convert import backbone_from_folder
from kzoo.utils.weights import persistent_weights

LENGTH = 56  # every batch padded to one length: one compiled graph


def run_original_protocol(backbone):
    """Max abs difference to the original's outputs over the 30
    sentences."""
    sentences, expected = original_sentences(), original_outputs()
    worst = 0.0
    for i in range(10):
        batch = [sentences[k][i] for k in range(3)]
        top = backbone.predict_on_batch(
            character_batch(batch, LENGTH))["sequence_output"]
        for k, words in enumerate(batch):
            got = np.asarray(top)[k, 1:len(words) + 1]
            worst = max(worst, float(np.abs(got - expected[k][i]).max()))
    return worst


def test_original_outputs_reproduced_statefully():
    backbone = backbone_from_folder(ELMO_DIR, stateful=True, batch_size=3)
    worst = run_original_protocol(backbone)
    print(f"\nELMo vs the original biLM on {keras.backend.backend()}: "
          f"max abs {worst:.2e}")
    assert worst <= 1e-5
    # The carried state matters: a fresh state per batch is further off.
    fresh = backbone_from_folder(ELMO_DIR)
    assert run_original_protocol(fresh) > 1e-3
    # reset_states starts over: the run repeats exactly.
    backbone.reset_states()
    assert run_original_protocol(backbone) == worst


def test_stateless_padding_is_exact():
    backbone = backbone_from_folder(ELMO_DIR)
    sentences = original_sentences()[0][:3]  # 49, 50 and 25 words
    batch = backbone(character_batch(sentences, 60))
    for row, words in enumerate(sentences):
        alone = backbone(character_batch([words], len(words) + 2))
        n = len(words) + 2
        for name in ("sequence_output", "layer_outputs"):
            got = to_numpy(batch[name])[row][:n]
            assert_all_close(got, to_numpy(alone[name])[0], atol=1e-6,
                             what=f"{name} of sentence {row} padded")
        assert np.all(to_numpy(batch["layer_outputs"])[row][n:] == 0.0)
    # Stateless and a fresh stateful backbone agree on a first batch.
    stateful = backbone_from_folder(ELMO_DIR, stateful=True, batch_size=3)
    assert_all_close(stateful(character_batch(sentences, 60)), batch,
                     atol=1e-6)


def test_layers_are_token_layer_then_each_lstm_layer():
    backbone = backbone_from_folder(ELMO_DIR)
    out = to_numpy(backbone(character_batch([["A", "b"]], 4)))
    layers = out["layer_outputs"][0]  # (tokens, layers, 32)
    assert layers.shape == (4, 3, 32)
    np.testing.assert_array_equal(layers[:, 0, :16], layers[:, 0, 16:])
    np.testing.assert_array_equal(layers[:, 2], out["sequence_output"][0])


def test_converted_preset_round_trip(tmp_path):
    original = backbone_from_folder(ELMO_DIR)
    kzoo.convert.hf_to_preset(ELMO_DIR, tmp_path / "elmo", verbose=False)
    loaded = kzoo.ElmoBackbone.from_preset(tmp_path / "elmo")
    for a, b in zip(loaded.weights, original.weights):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))
    inputs = character_batch(original_sentences()[1][:2], 30)
    assert_all_close(loaded(inputs), original(inputs), atol=0.0)
    # The folder's vocabulary became the tokenizer's.
    tokenizer = kzoo.ElmoTokenizer.from_preset(tmp_path / "elmo")
    assert tokenizer.vocabulary_size == 458


def test_a_preset_loads_statefully_and_a_stateful_one_saves_weights_only(
        tmp_path):
    # The carried states are not weights: a preset loads into a stateful
    # backbone (which then reproduces the original), and a stateful
    # backbone's preset holds no states and loads into a stateless one.
    kzoo.convert.hf_to_preset(ELMO_DIR, tmp_path / "elmo", verbose=False)
    stateful = kzoo.ElmoBackbone.from_preset(tmp_path / "elmo",
                                             stateful=True, batch_size=3)
    assert run_original_protocol(stateful) <= 1e-5
    stateful.save_to_preset(tmp_path / "saved")
    stateless = kzoo.ElmoBackbone.from_preset(tmp_path / "saved",
                                              stateful=False)
    weights = persistent_weights(stateful)
    assert len(weights) == len(stateful.weights) - 8  # h and c, 4 LSTMs
    for a, b in zip(stateless.weights, weights, strict=True):
        np.testing.assert_array_equal(keras.ops.convert_to_numpy(a),
                                      keras.ops.convert_to_numpy(b))


def _damaged_copy(tmp_path, edit):
    folder = tmp_path / "damaged"
    folder.mkdir()
    (folder / "options.json").write_bytes(
        (ELMO_DIR / "options.json").read_bytes())
    with h5py.File(ELMO_DIR / "lm_weights.hdf5", "r") as src, \
            h5py.File(folder / "lm_weights.hdf5", "w") as dst:
        for name in ("char_embed", "CNN", "CNN_high_0", "CNN_high_1",
                     "CNN_proj", "RNN_0", "RNN_1"):
            src.copy(name, dst)
        edit(dst)
    return folder


@pytest.mark.parametrize("edit, message", [
    (lambda f: f.__delitem__("CNN_proj/b_proj"), "missing: CNN_proj/b_proj"),
    (lambda f: f.create_dataset("extra", data=np.zeros(3)),
     "unexpected: extra"),
    (lambda f: (f.__delitem__("CNN/b_cnn_0"),
                f.create_dataset("CNN/b_cnn_0", data=np.zeros(5))),
     r"CNN/b_cnn_0 \(5,\) does not fit"),
])
def test_a_mismatched_weights_file_is_an_error_naming_the_tensor(
        tmp_path, edit, message):
    folder = _damaged_copy(tmp_path, edit)
    with pytest.raises(ConversionError, match=message):
        backbone_from_folder(folder)


def test_bad_options_are_an_error(tmp_path):
    folder = _damaged_copy(tmp_path, lambda f: None)
    (folder / "options.json").write_text('{"lstm": {}}')
    with pytest.raises(ConversionError, match="not an ELMo options.json"):
        backbone_from_folder(folder)
