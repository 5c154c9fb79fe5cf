"""The download cache, against a Hugging Face-layout repository served
from 127.0.0.1: first download, cache hit with the server stopped, sha256
mismatch, a connection cut mid-file, offline mode. Nothing half-written or
unverified ever lands in the cache."""

import json
import time

import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.convert import ConversionError
from kzoo.utils.files import sha256_of, write_json

from convert_helpers import (
    FakeHub, files_under, hf_outputs, kzoo_outputs, make_hf_bert,
    max_abs_differences, random_inputs, save_hf)

pytest.importorskip("torch")
pytest.importorskip("transformers")

REPO = "kzoo-test/tiny-bert"


@pytest.fixture(scope="module")
def hf_repo(tmp_path_factory):
    """A random-weight BertForMaskedLM saved by transformers, its inputs and
    reference logits."""
    model = make_hf_bert("BertForMaskedLM", "odd36")
    folder = save_hf(model, tmp_path_factory.mktemp("repo") / "tiny-bert")
    inputs = random_inputs(model.config)
    return folder, inputs, hf_outputs(model, inputs)


@pytest.fixture
def hub(tmp_path, hf_repo, monkeypatch):
    hub = FakeHub(tmp_path / "hub")
    hub.add_repo(REPO, hf_repo[0])
    monkeypatch.setenv("KZOO_HF_ENDPOINT", hub.endpoint)
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    yield hub
    hub.stop()


def _named_style_preset(tmp_path, hf_folder, files):
    """A preset folder like the shipped ones: config + tokenizer +
    metadata declaring a remote source, and no weights."""
    from kzoo.convert import hf_to_preset
    scratch = tmp_path / "scratch"
    hf_to_preset(hf_folder, scratch, task="backbone", verbose=False)
    folder = tmp_path / "tiny_test_preset"
    folder.mkdir()
    for name in ("config.json", "tokenizer.json", "vocab.txt",
                 "preprocessor.json"):
        (folder / name).write_bytes((scratch / name).read_bytes())
    write_json(folder / "metadata.json", {
        "name": "tiny_test_preset", "family": "bert",
        "source": {"huggingface": REPO, "revision": "main", "files": files}})
    return folder


def _declared(hf_folder, sha256=None):
    return [{"name": name, "bytes": (hf_folder / name).stat().st_size,
             "sha256": sha256 or sha256_of(hf_folder / name)}
            for name in ("config.json", "model.safetensors")]


def _cache_is_empty():
    return files_under(presets.cache_dir()) == []


def test_first_download_then_cache_hit_with_server_stopped(hub, hf_repo,
                                                           tmp_path, capsys):
    hf_folder, inputs, expected = hf_repo
    preset = _named_style_preset(tmp_path, hf_folder, _declared(hf_folder))
    assert _cache_is_empty()

    backbone = kzoo.BertBackbone.from_preset(str(preset))
    assert hub.fetched("model.safetensors") == 1
    assert "Downloading kzoo-test/tiny-bert/model.safetensors" in \
        capsys.readouterr().err  # the progress line
    cached = presets.cache_dir() / "tiny_test_preset"
    assert (cached / presets.BACKBONE_WEIGHTS).is_file()
    metadata = json.loads((cached / "metadata.json").read_text())
    assert {f["verified"] for f in metadata["source"]["files"]} == {
        "sha256 (declared)"}
    # Only the converted preset remains: no raw downloads, no partial files.
    assert all(not name.startswith(".downloads") or "/" not in name
               for name in files_under(presets.cache_dir()))
    assert not [n for n in files_under(presets.cache_dir()) if "partial" in n]

    hub.stop()
    start = time.perf_counter()
    again = kzoo.BertBackbone.from_preset(str(preset))
    print(f"cache hit: {time.perf_counter() - start:.2f}s")
    for a, b in zip(backbone.weights, again.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())

    # The weights are the checkpoint's (a BertForMaskedLM has no pooler, so
    # that one stays at its initial values).
    reference = kzoo.BertMaskedLM.from_preset(str(hf_folder),
                                              preprocessor=None).backbone
    for a, b in zip(reference.weights, again.weights):
        assert a.path == b.path
        if not a.path.startswith("pooler"):
            np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_hf_uri_download_cache_hit_and_offline(hub, hf_repo, monkeypatch):
    hf_folder, inputs, expected = hf_repo
    mlm = kzoo.BertMaskedLM.from_preset(f"hf://{REPO}", preprocessor=None)
    differences = max_abs_differences(kzoo_outputs(mlm, inputs), expected)
    assert max(differences.values()) <= 1e-5
    # Tokenizer assets came along.
    tokenizer = kzoo.BertTokenizer.from_preset(f"hf://{REPO}")
    assert tokenizer.vocabulary_size == 99
    requests = len(hub.requests)

    hub.stop()
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    again = kzoo.BertMaskedLM.from_preset(f"hf://{REPO}", preprocessor=None)
    assert len(hub.requests) == requests
    for a, b in zip(mlm.weights, again.weights):
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_sha_mismatch_caches_nothing(hub, hf_repo, tmp_path):
    hf_folder = hf_repo[0]
    files = _declared(hf_folder)
    files[1]["sha256"] = "0" * 64
    preset = _named_style_preset(tmp_path, hf_folder, files)
    with pytest.raises(presets.MissingWeightsError, match="sha256 mismatch"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert _cache_is_empty()


def test_server_stated_sha_is_checked(hub, hf_repo):
    """The hub states a large file's sha256 in X-Linked-Etag on its
    redirect; hf:// downloads (no declared hashes) are checked against it."""
    hub.etag["model.safetensors"] = "f" * 64
    with pytest.raises(presets.MissingWeightsError, match="sha256 mismatch"):
        kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    assert _cache_is_empty()
    hub.etag["model.safetensors"] = sha256_of(hf_repo[0] / "model.safetensors")
    kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    metadata = json.loads((presets.cache_dir() / "hf" / "kzoo-test--tiny-bert"
                           / "main" / "metadata.json").read_text())
    verified = {f["file"]: f["verified"] for f in metadata["source"]["files"]}
    assert verified["model.safetensors"] == "sha256 (server)"
    assert metadata["source"]["commit"] == "0" * 40


def test_connection_cut_mid_file(hub, hf_repo, tmp_path, monkeypatch):
    hf_folder = hf_repo[0]
    preset = _named_style_preset(tmp_path, hf_folder, _declared(hf_folder))
    # Cut every time: an error after the retries, nothing half-written.
    monkeypatch.setenv("KZOO_DOWNLOAD_RETRIES", "1")
    hub.cut["model.safetensors"] = 10
    with pytest.raises(presets.MissingWeightsError,
                       match="connection closed after"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert hub.fetched("model.safetensors") == 2
    assert _cache_is_empty()
    # Cut once: the retry starts the file again and succeeds.
    hub.cut["model.safetensors"] = 1
    kzoo.BertBackbone.from_preset(str(preset))
    assert hub.fetched("model.safetensors") == 4
    assert (presets.cache_dir() / "tiny_test_preset"
            / presets.BACKBONE_WEIGHTS).is_file()


def test_offline_never_connects(hub, hf_repo, tmp_path, monkeypatch):
    preset = _named_style_preset(tmp_path, hf_repo[0], _declared(hf_repo[0]))
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(presets.MissingWeightsError) as info:
        kzoo.BertBackbone.from_preset(str(preset))
    message = str(info.value)
    assert "KZOO_OFFLINE=1" in message
    assert "kzoo convert" in message and "load_weights=False" in message
    assert str(presets.cache_dir() / "tiny_test_preset") in message
    with pytest.raises(presets.MissingWeightsError, match="KZOO_OFFLINE"):
        kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    assert hub.requests == []
    assert _cache_is_empty()
    # Offline, a random model is still there for the asking.
    kzoo.BertBackbone.from_preset(str(preset), load_weights=False)


def test_unreachable_server(hf_repo, tmp_path, monkeypatch):
    import socket
    with socket.socket() as s:  # a port with nobody listening
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setenv("KZOO_HF_ENDPOINT", f"http://127.0.0.1:{port}")
    monkeypatch.setenv("KZOO_DOWNLOAD_RETRIES", "0")
    monkeypatch.delenv("KZOO_OFFLINE", raising=False)
    preset = _named_style_preset(tmp_path, hf_repo[0], _declared(hf_repo[0]))
    with pytest.raises(presets.MissingWeightsError, match="refused"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert _cache_is_empty()


def test_named_bert_base_offline_message(monkeypatch):
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(presets.MissingWeightsError) as info:
        kzoo.BertBackbone.from_preset("bert_base")
    message = str(info.value)
    assert "google-bert/bert-base-uncased" in message
    assert "config.json, model.safetensors" in message
    assert "bert_base_en_uncased" in message and "KZOO_OFFLINE" in message


def test_named_preset_rejects_a_checkpoint_of_another_shape(hub, hf_repo):
    """A hub answering for google-bert/bert-base-uncased with a tiny model:
    the conversion is refused before any weight is read, nothing cached."""
    hub.add_repo("google-bert/bert-base-uncased", hf_repo[0])
    with pytest.raises(ConversionError, match="does not match the preset"):
        kzoo.BertBackbone.from_preset("bert_base")
    assert _cache_is_empty()
