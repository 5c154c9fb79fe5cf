"""Downloads through huggingface_hub and the kzoo cache, against a
Hugging Face hub served from 127.0.0.1 (tests/convert/convert_helpers.py):
first download, cache hit with the server stopped, revision pinning,
sha256 mismatches (declared and stated), a connection cut mid-file and
resumed, gated repositories and tokens, offline mode (KZOO_OFFLINE,
HF_HUB_OFFLINE) and huggingface_hub's cache. Nothing half-written or
unverified ever lands in the cache."""

import json
import os
import shutil
import time

import numpy as np
import pytest

import kzoo
from kzoo import presets
from kzoo.convert import ConversionError
from kzoo.utils.files import sha256_of

from convert_helpers import (
    FakeHub, files_under, hf_outputs, kzoo_outputs, make_hf_bert,
    max_abs_differences, named_style_preset, random_inputs, save_hf)

# Downloads and the cache do not depend on the backend (conversion
# numerics are checked per backend in test_bert_parity).
pytestmark = pytest.mark.once


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
    return named_style_preset(tmp_path, hf_folder, REPO, files)


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


def _hub_cache_files():
    return files_under(os.environ["HF_HUB_CACHE"])


def test_sha_mismatch_caches_nothing(hub, hf_repo, tmp_path):
    hf_folder = hf_repo[0]
    files = _declared(hf_folder)
    files[1]["sha256"] = "0" * 64
    preset = _named_style_preset(tmp_path, hf_folder, files)
    with pytest.raises(presets.MissingWeightsError, match="sha256 mismatch"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert _cache_is_empty()
    # Evicted from huggingface_hub's cache too, so the next attempt
    # downloads it again rather than trusting it.
    assert not [n for n in _hub_cache_files() if "model.safetensors" in n]
    assert hub.fetched("model.safetensors") == 1
    with pytest.raises(presets.MissingWeightsError, match="sha256 mismatch"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert hub.fetched("model.safetensors") == 2


def test_revision_is_pinned_to_one_commit(hub, hf_repo):
    """The branch is resolved once, on the first file; every other
    request names the commit, which the converted preset records."""
    kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    commit = hub.commit(REPO)
    metadata = json.loads((presets.cache_dir() / "hf" / "kzoo-test--tiny-bert"
                           / "main" / "metadata.json").read_text())
    assert metadata["source"]["revision"] == "main"
    assert metadata["source"]["commit"] == commit
    paths = [path for server, _, path, _ in hub.log if server == "hub"]
    first = [path for path in paths if path.endswith("/config.json")]
    assert all(path.endswith("/resolve/main/config.json") for path in first)
    assert all(f"/resolve/{commit}/" in path for path in paths
               if not path.endswith("/config.json"))
    # A commit as the revision; an unknown revision is named.
    kzoo.BertBackbone.from_preset(f"hf://{REPO}@{commit}")
    with pytest.raises(presets.MissingWeightsError,
                       match="no revision 'v9.9'"):
        kzoo.BertBackbone.from_preset(f"hf://{REPO}@v9.9")


def test_gated_repository_needs_a_token(hub, monkeypatch):
    hub.gated[REPO] = "hf_test_token"
    with pytest.raises(presets.MissingWeightsError,
                       match="(?s)gated.*HF_TOKEN"):
        kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    assert _cache_is_empty()
    monkeypatch.setenv("HF_TOKEN", "hf_test_token")
    kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    # The token went to the hub, and never to the CDN it redirects to.
    assert any(headers.get("authorization") == "Bearer hf_test_token"
               for server, _, _, headers in hub.log if server == "hub")
    cdn = [headers for server, _, _, headers in hub.log if server == "cdn"]
    assert cdn and not any("authorization" in headers for headers in cdn)


def test_hf_endpoint_is_honoured(hub, monkeypatch):
    monkeypatch.delenv("KZOO_HF_ENDPOINT")
    monkeypatch.setenv("HF_ENDPOINT", hub.endpoint)
    kzoo.BertBackbone.from_preset(f"hf://{REPO}")
    assert hub.fetched("model.safetensors") == 1


def test_converts_from_huggingface_hubs_cache_offline_or_unreachable(
        hub, hf_repo, tmp_path, monkeypatch):
    """Files huggingface_hub has cached (for kzoo or for transformers)
    convert without the network: with HF_HUB_OFFLINE=1, and with the hub
    down."""
    hf_folder = hf_repo[0]
    preset = _named_style_preset(tmp_path, hf_folder, _declared(hf_folder))
    first = kzoo.BertBackbone.from_preset(str(preset))
    converted = presets.cache_dir() / "tiny_test_preset"
    shutil.rmtree(converted)
    hub.stop()
    requests = len(hub.log)

    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    again = kzoo.BertBackbone.from_preset(str(preset))
    assert len(hub.log) == requests
    for a, b in zip(first.weights, again.weights):
        if not a.path.startswith("pooler"):  # not in a BertForMaskedLM
            np.testing.assert_array_equal(a.numpy(), b.numpy())
    source = json.loads((converted / "metadata.json").read_text())["source"]
    assert source["commit"] == hub.commit(REPO)
    assert {f["verified"] for f in source["files"]} == {"sha256 (declared)"}

    shutil.rmtree(converted)
    monkeypatch.delenv("HF_HUB_OFFLINE")
    kzoo.BertBackbone.from_preset(str(preset))  # refused connections
    assert (converted / presets.BACKBONE_WEIGHTS).is_file()


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
    assert metadata["source"]["commit"] == hub.commit(REPO)


def test_interrupted_download_resumes_with_a_range_request(
        hub, hf_repo, tmp_path, monkeypatch):
    """The hub cuts the connection a third of the way into the weights;
    huggingface_hub asks for the rest (`Range: bytes=N-`) instead of
    starting over, and the file is whole: its declared sha256 matches.

    huggingface_hub writes what it receives in chunks of
    DOWNLOAD_CHUNK_SIZE (10 MB) and resumes after the last whole one, so
    the chunk is made 4 kB here for a 100 kB file to show it."""
    from huggingface_hub import constants
    chunk = 4096
    monkeypatch.setattr(constants, "DOWNLOAD_CHUNK_SIZE", chunk)
    hf_folder = hf_repo[0]
    size = (hf_folder / "model.safetensors").stat().st_size
    preset = _named_style_preset(tmp_path, hf_folder, _declared(hf_folder))
    hub.cut["model.safetensors"] = 1
    hub.cut_after["model.safetensors"] = size // 3
    kzoo.BertBackbone.from_preset(str(preset))
    resumed_at = (size // 3) // chunk * chunk
    assert resumed_at > 0
    assert hub.ranges("model.safetensors") == [None, f"bytes={resumed_at}-"]
    # Only the part of a chunk cut mid-way was sent twice.
    assert hub.bytes_sent("model.safetensors") < size + chunk
    metadata = json.loads((presets.cache_dir() / "tiny_test_preset"
                           / "metadata.json").read_text())
    weights = {f["file"]: f for f in metadata["source"]["files"]}
    assert weights["model.safetensors"]["verified"] == "sha256 (declared)"


def test_connection_cut_every_time(hub, hf_repo, tmp_path):
    """A hub that never sends a byte of the file: an error once
    huggingface_hub's retries are spent, and nothing half-written in
    either cache."""
    hf_folder = hf_repo[0]
    preset = _named_style_preset(tmp_path, hf_folder, _declared(hf_folder))
    hub.cut["model.safetensors"] = 100
    hub.cut_after["model.safetensors"] = 0
    with pytest.raises(presets.MissingWeightsError,
                       match="(?s)model.safetensors.*Protocol"):
        kzoo.BertBackbone.from_preset(str(preset))
    assert hub.fetched("model.safetensors") > 1  # it did retry
    assert _cache_is_empty()
    assert not [n for n in files_under(os.environ["HF_HUB_CACHE"])
                if n.endswith(".incomplete") or "model.safetensors" in n]


def test_offline_never_connects(hub, hf_repo, tmp_path, monkeypatch):
    preset = _named_style_preset(tmp_path, hf_repo[0], _declared(hf_repo[0]))
    monkeypatch.setenv("KZOO_OFFLINE", "1")
    with pytest.raises(presets.MissingWeightsError) as info:
        kzoo.BertBackbone.from_preset(str(preset))
    message = str(info.value)
    assert "KZOO_OFFLINE=1" in message
    # Said once per attempt, not twice in one line.
    assert all(line.count("KZOO_OFFLINE=1 is set") <= 1
               for line in message.splitlines()), message
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


def test_progress_bar_takes_what_huggingface_hub_calls(capsys):
    """huggingface_hub's Xet downloads (no loopback hub serves those) call
    more of tqdm than plain ones: the bar kzoo hands over is a tqdm."""
    from kzoo.convert.download import progress_bar_class
    bar = progress_bar_class("Downloading org/name/model.safetensors")(
        total=100, initial=10, unit="B", unit_scale=True, desc="ignored",
        bar_format="{l_bar}{bar}", name="huggingface_hub.xet_get")
    bar.set_postfix_str("1 MB/s", refresh=False)
    bar.set_description("ignored too", refresh=False)
    assert "rate" in bar.format_dict
    bar.total = 200
    bar.update(90)
    bar.refresh()
    bar.close()
    lines = capsys.readouterr().err.strip().splitlines()
    assert lines[-1].startswith("Downloading org/name/model.safetensors")
    assert "100B/200B" in lines[-1]
