"""Bad checkpoints: each a clear error naming the problem, and nothing
left in the cache."""

import json
import os
import pickle
import struct

import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.convert import ConversionError
from kzoo.convert.safetensors import SafetensorsError, load_file, save_file

from convert_helpers import files_under, make_hf_bert, save_hf

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once



@pytest.fixture(scope="module")
def good(tmp_path_factory):
    """A good BertForMaskedLM folder; tests copy and damage it."""
    folder = tmp_path_factory.mktemp("good") / "bert"
    save_hf(make_hf_bert("BertForMaskedLM", "odd20"), folder)
    return folder


def _copy(good, dest, tensors=None, config=None):
    dest.mkdir()
    for name in ("vocab.txt", "tokenizer_config.json"):
        (dest / name).write_bytes((good / name).read_bytes())
    config = config or json.loads((good / "config.json").read_text())
    (dest / "config.json").write_text(json.dumps(config))
    if tensors is None:
        (dest / "model.safetensors").write_bytes(
            (good / "model.safetensors").read_bytes())
    else:
        save_file(tensors, dest / "model.safetensors")
    return dest


def _load_fails(folder, match, cls=kzoo.BertMaskedLM):
    """from_preset(folder) raises a ConversionError matching `match`, and
    the cache is left empty."""
    with pytest.raises(ConversionError, match=match) as info:
        cls.from_preset(str(folder), preprocessor=None)
    assert files_under(presets.cache_dir()) == []
    return str(info.value)


def test_truncated_safetensors(good, tmp_path):
    folder = _copy(good, tmp_path / "truncated")
    data = (folder / "model.safetensors").read_bytes()
    (folder / "model.safetensors").write_bytes(data[:len(data) - 1000])
    message = _load_fails(folder, "truncated")
    assert "model.safetensors" in message


def test_truncated_header(tmp_path):
    path = tmp_path / "x.safetensors"
    path.write_bytes(struct.pack("<Q", 10_000) + b"{}")
    with pytest.raises(SafetensorsError,
                       match="not a readable safetensors file"):
        load_file(path)
    path.write_bytes(b"abc")
    with pytest.raises(SafetensorsError, match=r"\(3 bytes\).*truncated"):
        load_file(path)


def test_wrong_shape(good, tmp_path):
    tensors = load_file(good / "model.safetensors")
    name = "bert.encoder.layer.1.attention.self.key.weight"
    tensors[name] = np.zeros((20, 19), "float32")
    message = _load_fails(_copy(good, tmp_path / "shape", tensors),
                          "attention.self.key.weight")
    assert "(20, 19)" in message and "(20, 20)" in message


def test_missing_tensor(good, tmp_path):
    tensors = load_file(good / "model.safetensors")
    del tensors["bert.encoder.layer.2.output.LayerNorm.bias"]
    message = _load_fails(_copy(good, tmp_path / "missing", tensors),
                          "missing tensor")
    assert "encoder.layer.2.output.LayerNorm.bias" in message


def test_config_disagrees_with_weights(good, tmp_path):
    config = json.loads((good / "config.json").read_text())
    # Two layers in the config, three in the weights: the third layer's
    # tensors are named, not silently dropped.
    message = _load_fails(
        _copy(good, tmp_path / "layers", config={**config,
                                                  "num_hidden_layers": 2}),
        "unexpected tensor")
    assert "encoder.layer.2." in message
    # A wider hidden size than the weights hold.
    _load_fails(_copy(good, tmp_path / "wide",
                      config={**config, "hidden_size": 24}),
                "word_embeddings.weight")


def test_unknown_model_type(good, tmp_path):
    config = json.loads((good / "config.json").read_text())
    message = _load_fails(
        _copy(good, tmp_path / "unknown",
              config={**config, "model_type": "not_a_model"}),
        "Unknown model_type 'not_a_model'")
    assert "bert" in message  # says what kzoo does convert


def test_unsupported_options(good, tmp_path):
    config = json.loads((good / "config.json").read_text())
    for i, (key, value, match) in enumerate([
            ("position_embedding_type", "relative_key", "absolute"),
            ("hidden_act", "mish", "hidden_act='mish'"),
            ("is_decoder", True, "decoder")]):
        _load_fails(_copy(good, tmp_path / f"opt{i}",
                          config={**config, key: value}), match)


def test_untied_decoder_is_refused(good, tmp_path):
    tensors = load_file(good / "model.safetensors")
    tensors["cls.predictions.decoder.weight"] = (
        tensors["bert.embeddings.word_embeddings.weight"] + 1.0)
    _load_fails(_copy(good, tmp_path / "untied", tensors), "differs from")
    # A tied copy that is equal is verified and skipped, not an error.
    tensors["cls.predictions.decoder.weight"] = (
        tensors["bert.embeddings.word_embeddings.weight"])
    folder = _copy(good, tmp_path / "tied", tensors)
    report = kzoo.convert.load_hf_weights(
        kzoo.BertMaskedLM.from_preset(str(good), preprocessor=None), folder,
        verbose=False)
    assert "cls.predictions.decoder.weight" in report.skipped


def test_pickle_with_code_is_never_run(good, tmp_path):
    folder = tmp_path / "evil"
    folder.mkdir()
    (folder / "config.json").write_bytes((good / "config.json").read_bytes())
    marker = tmp_path / "pwned"

    class Evil:
        def __reduce__(self):
            return (os.system, (f"touch {marker}",))

    with open(folder / "pytorch_model.bin", "wb") as f:
        pickle.dump({"x": Evil()}, f)
    _load_fails(folder, "weights_only=True")
    assert not marker.exists()


def test_no_weights_and_no_config(tmp_path):
    folder = tmp_path / "empty"
    folder.mkdir()
    (folder / "config.json").write_text(json.dumps({"model_type": "bert"}))
    _load_fails(folder, "holds no weights")
    no_config = tmp_path / "no_config"
    no_config.mkdir()
    with pytest.raises(ConversionError, match="config.json"):
        kzoo.convert.hf_to_preset(no_config, tmp_path / "out")
    assert not (tmp_path / "out").exists()
