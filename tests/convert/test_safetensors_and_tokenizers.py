"""kzoo's safetensors wrapper (the `safetensors` package's NumPy API):
round trips, bfloat16, corrupt headers refused at open, names and shapes
from the header alone; and tokenizer assets coming along with a
conversion."""

import json

import numpy as np
import pytest

import kzoo
from kzoo.convert import hf_to_preset
from kzoo.convert.safetensors import (
    SafetensorsError, SafetensorsFile, load_file, save_file)

from convert_helpers import make_hf_bert, save_hf, write_vocab

# Parity with the original and conversion run in one backend's pass (KZOO_ONCE_BACKEND)
# only: tests/models/test_training_cross_backend.py holds the other
# backends to the same outputs and training step, task for task.
pytestmark = pytest.mark.once


def test_round_trip_matches_the_reference_library(tmp_path):
    import safetensors.numpy as safetensors_numpy
    rng = np.random.default_rng(0)
    tensors = {
        "f32": rng.normal(size=(3, 5)).astype("float32"),
        "f16": rng.normal(size=(7,)).astype("float16"),
        "f64": rng.normal(size=(2, 2, 2)),
        "i64": np.arange(6, dtype="int64").reshape(2, 3),
        "i8": np.array([-1, 2], "int8"),
        "bool": np.array([True, False]),
        "scalar": np.array(3.5, "float32"),
        "empty": np.zeros((0, 4), "float32"),
    }
    ours = save_file(tensors, tmp_path / "ours.safetensors")
    theirs = safetensors_numpy.load_file(str(ours))
    for name, value in tensors.items():
        np.testing.assert_array_equal(theirs[name], value)
        assert theirs[name].dtype == value.dtype
    safetensors_numpy.save_file(tensors, str(tmp_path / "theirs.safetensors"))
    for name, value in load_file(tmp_path / "theirs.safetensors").items():
        np.testing.assert_array_equal(value, tensors[name])
        assert value.dtype == tensors[name].dtype


def test_bfloat16_is_read_as_float32(tmp_path):
    import torch
    import safetensors.torch as safetensors_torch
    value = torch.randn(4, 3).to(torch.bfloat16)
    safetensors_torch.save_file({"w": value}, str(tmp_path / "bf16.safetensors"))
    with SafetensorsFile(tmp_path / "bf16.safetensors") as f:
        assert f.info("w").dtype == "BF16"
        read = f.get("w")
    assert read.dtype == np.float32
    np.testing.assert_array_equal(read, value.float().numpy())


def _raw_safetensors(path, header, data_bytes):
    import struct
    raw = json.dumps(header).encode()
    path.write_bytes(struct.pack("<Q", len(raw)) + raw + b"\0" * data_bytes)
    return path


@pytest.mark.parametrize("header,data_bytes", [
    # two tensors sharing bytes
    ({"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
      "b": {"dtype": "F32", "shape": [2], "data_offsets": [4, 12]}}, 12),
    # a shape that needs 12 bytes in an 8-byte span
    ({"a": {"dtype": "F32", "shape": [3], "data_offsets": [0, 8]}}, 8),
    # data past the last tensor (a file that is not what its header says)
    ({"a": {"dtype": "F32", "shape": [1], "data_offsets": [0, 4]}}, 8),
    # a tensor that runs past the end of the file (truncated)
    ({"a": {"dtype": "F32", "shape": [4], "data_offsets": [0, 16]}}, 8),
])
def test_inconsistent_headers_are_refused_at_open(tmp_path, header,
                                                  data_bytes):
    path = _raw_safetensors(tmp_path / "x.safetensors", header, data_bytes)
    with pytest.raises(SafetensorsError,
                       match="not a readable safetensors file") as info:
        SafetensorsFile(path)
    assert str(path) in str(info.value)


def test_unreadable_dtypes_are_named_at_open(tmp_path):
    import torch
    import safetensors.torch as safetensors_torch
    path = tmp_path / "f8.safetensors"
    safetensors_torch.save_file(
        {"ok": torch.zeros(2),
         "scale": torch.zeros(2).to(torch.float8_e4m3fn)}, str(path))
    with pytest.raises(SafetensorsError, match="'scale' has dtype F8_E4M3"):
        SafetensorsFile(path)


def test_header_is_read_without_reading_tensors(tmp_path):
    """Names, shapes and dtypes come from the header: a file whose tensor
    bytes are all garbage still opens and describes itself."""
    path = _raw_safetensors(
        tmp_path / "lazy.safetensors",
        {"w": {"dtype": "F16", "shape": [2, 3], "data_offsets": [0, 12]},
         "__metadata__": {"format": "pt"}}, 12)
    with SafetensorsFile(path) as f:
        assert f.keys() == ["w"]
        assert f.info("w").shape == (2, 3) and f.info("w").dtype == "F16"
        assert f.metadata == {"format": "pt"}
        assert f.get("w").dtype == np.float16


def test_non_contiguous_arrays_are_written_by_value(tmp_path):
    value = np.arange(12, dtype="float32").reshape(3, 4)
    path = save_file({"t": value.T, "s": value[:, ::2]},
                     tmp_path / "views.safetensors")
    read = load_file(path)
    np.testing.assert_array_equal(read["t"], value.T)
    np.testing.assert_array_equal(read["s"], value[:, ::2])
    assert read["t"].flags.writeable
    assert [p.name for p in tmp_path.iterdir()] == ["views.safetensors"]


@pytest.fixture(scope="module")
def hf_folder(tmp_path_factory):
    folder = tmp_path_factory.mktemp("tok") / "bert"
    save_hf(make_hf_bert("BertModel", "odd20"), folder, vocab=False)
    return folder


def test_vocab_txt_and_lowercasing_come_along(hf_folder, tmp_path):
    folder = tmp_path / "cased"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((hf_folder / name).read_bytes())
    words = write_vocab(folder, 61)
    (folder / "tokenizer_config.json").write_text(
        json.dumps({"do_lower_case": False}))
    hf_to_preset(folder, tmp_path / "preset", verbose=False)
    tokenizer = kzoo.BertTokenizer.from_preset(str(tmp_path / "preset"))
    assert tokenizer.lowercase is False
    assert tokenizer.get_vocabulary() == words
    preprocessor = kzoo.BertPreprocessor.from_preset(str(tmp_path / "preset"))
    # The packed length is capped by max_position_embeddings (17 here).
    assert preprocessor.sequence_length == 17


def test_vocabulary_from_tokenizer_json(hf_folder, tmp_path):
    folder = tmp_path / "fast_only"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((hf_folder / name).read_bytes())
    words = write_vocab(tmp_path / "scratch", 61)
    tokenizer_json = {
        "normalizer": {"type": "Sequence", "normalizers": [
            {"type": "BertNormalizer", "lowercase": False,
             "clean_text": True, "handle_chinese_chars": True,
             "strip_accents": None}]},
        "model": {"type": "WordPiece", "unk_token": "[UNK]",
                  # ids deliberately not in file order
                  "vocab": dict(reversed([(w, i) for i, w in
                                          enumerate(words)]))},
    }
    (folder / "tokenizer.json").write_text(json.dumps(tokenizer_json))
    report = hf_to_preset(folder, tmp_path / "preset", verbose=False)
    assert any("tokenizer.json" in note for note in report.notes)
    tokenizer = kzoo.BertTokenizer.from_preset(str(tmp_path / "preset"))
    assert tokenizer.get_vocabulary() == words
    assert tokenizer.lowercase is False


def test_tokenizer_larger_than_the_embedding_is_refused(hf_folder, tmp_path):
    folder = tmp_path / "big_vocab"
    folder.mkdir()
    for name in ("config.json", "model.safetensors"):
        (folder / name).write_bytes((hf_folder / name).read_bytes())
    write_vocab(folder, 80)  # vocab_size is 61
    with pytest.raises(kzoo.convert.ConversionError, match="80 tokens"):
        hf_to_preset(folder, tmp_path / "preset", verbose=False)
    assert not (tmp_path / "preset").exists()
