"""Where weights come from: preset folder, cache, installed package, hub.

`kzoo.presets` knows nothing of conversion: importing `kzoo.convert`
registers two hooks with it (bottom of this module), and presets calls
them in three cases:

- `from_preset("path/to/hf-folder")`: a Hugging Face checkpoint folder is
  converted once into the cache (`<cache>/converted/<name>-<fingerprint>`)
  and loaded from there. Changing the folder's files changes the
  fingerprint, so a stale conversion is never used.
- `from_preset("hf://org/name")` (or `hf://org/name@revision`): the
  repository is fetched (unless already converted in
  `<cache>/hf/<org>--<name>/<revision>`), converted, and cached.
- a named preset without weights in its folder or in `<cache>/<name>`: the
  sources its `metadata.json` declares are tried in order (an installed
  Python package, then the Hugging Face hub), converted once into
  `<cache>/<name>`. The converted preset's metadata.json records what the
  download resolved to (`source`: the commit and every file's sha256; `kzoo
  info` shows it). A re-download (the cached weights gone, the record
  still there) fetches that commit again and checks each file against the
  recorded sha256: a file the hub now serves differently is an error, not
  a silent change of weights.

Hub files are fetched by `huggingface_hub` into its own cache (see
`kzoo/convert/download.py`: revision pinned to a commit, sha256 checked,
resumable, offline from that cache). A conversion reads them through a
staging folder of links and writes the kzoo preset into a staging folder
that is renamed into place only when complete: kzoo's cache only ever
holds whole, converted presets. One process at a time fetches and
converts a given destination (a file lock under `<cache>/.locks`); another
asking for the same preset waits, then finds it done.

Environment: see `kzoo/convert/download.py` (endpoint, offline, token,
huggingface_hub's cache) and `KZOO_CACHE` (kzoo's cache, default
~/.cache/kzoo).
"""

import contextlib
import hashlib
import importlib.util
import os
import re
import shutil
import sys
import tempfile
from pathlib import Path

from kzoo import presets
from kzoo.convert.api import hf_to_preset
from kzoo.convert.checkpoint import (
    SAFETENSORS, SAFETENSORS_INDEX, TORCH_BIN, TORCH_BIN_INDEX,
    TOKENIZER_FILES, is_hf_folder)
from kzoo.convert.download import (
    DEFAULT_ENDPOINT, FileUnavailable, HubRepo, endpoint, hub_cache_dir,
    offline_switch)
from kzoo.convert.errors import ConversionError, DownloadError
from kzoo.convert.progress import quiet
from kzoo.utils.files import read_json, sha256_of

_REPO = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_REVISION = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.\-/]*$")
_COMPLETE = "metadata.json"  # written last by a conversion


def _is_complete(folder):
    return (Path(folder) / _COMPLETE).is_file()


def _safe_relative(name):
    parts = Path(name).parts
    return (name and not Path(name).is_absolute() and ".." not in parts
            and not name.startswith(("/", "\\")))


def _say(message, verbose):
    if verbose and not quiet():
        print(message, file=sys.stderr, flush=True)


@contextlib.contextmanager
def exclusive(key, what, verbose=True):
    """Hold kzoo's cross-process lock on `key` (one fetch-and-convert per
    destination at a time). A process that finds the lock taken says so
    and waits; it then usually finds the work done. The lock is
    huggingface_hub's (a `filelock`, with a soft-lock fallback on file
    systems without `flock`)."""
    from huggingface_hub.utils import WeakFileLock
    safe = re.sub(r"[^A-Za-z0-9_.-]", "_", key)
    lock_path = presets.cache_dir() / ".locks" / f"{safe}.lock"
    lock_path.parent.mkdir(parents=True, exist_ok=True)
    with contextlib.ExitStack() as stack:
        try:
            stack.enter_context(WeakFileLock(lock_path, timeout=0.05))
        except TimeoutError:  # filelock.Timeout
            _say(f"Waiting for another process that is fetching {what} "
                 f"(lock {lock_path})", verbose)
            stack.enter_context(WeakFileLock(lock_path))
        yield


class staging_folder:
    """A temporary folder inside kzoo's cache, always removed. Downloads
    are linked into it for a conversion to read."""

    def __enter__(self):
        root = presets.cache_dir() / ".downloads"
        root.mkdir(parents=True, exist_ok=True)
        self.path = Path(tempfile.mkdtemp(dir=root))
        return self.path

    def __exit__(self, *exc):
        shutil.rmtree(self.path, ignore_errors=True)


def _place(path, dest):
    """Put the fetched file `path` at `dest` in a staging folder: a
    symbolic link into huggingface_hub's cache, or a copy where links are
    not allowed."""
    dest = Path(dest)
    dest.parent.mkdir(parents=True, exist_ok=True)
    try:
        os.symlink(os.path.realpath(path), dest)
    except OSError:
        shutil.copyfile(path, dest)


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
    """Where kzoo keeps the converted preset of `hf://repo@revision`."""
    return (presets.cache_dir() / "hf" / repo.replace("/", "--")
            / revision.replace("/", "--"))


def hf_preset(text, verbose=True):
    """A `Preset` for `hf://org/name[@revision]`, converted and cached."""
    repo, revision = parse_hf_uri(text)
    dest = hf_cache_dir(repo, revision)
    if _is_complete(dest):
        return presets.Preset(dest)
    with exclusive(f"hf--{repo}--{revision}", text, verbose):
        if not _is_complete(dest):  # or another process just made it
            with staging_folder() as staging:
                source = fetch_hf_repo(text, staging, verbose, dest=dest)
                hf_to_preset(staging, dest, overwrite=True, verbose=verbose,
                             source=source,
                             metadata={"name": repo.replace("/", "--")})
    return presets.Preset(dest)


def fetch_hf_repo(text, folder, verbose=True, dest=None):
    """Fetch what a conversion of `hf://org/name[@revision]` reads, link
    it into `folder`, and return the provenance record (with the commit).
    Raises `MissingWeightsError` saying what to do."""
    repo, revision = parse_hf_uri(text)
    hub = HubRepo(repo, revision, verbose)
    try:
        _fetch_checkpoint(hub, Path(folder))
    except DownloadError as e:
        raise presets.MissingWeightsError(
            _hf_failure(text, hub, e, dest)) from None
    return hub.provenance()


def _hf_failure(text, hub, error, dest):
    lines = [f"Could not fetch {text}: {error}", "Nothing was cached."]
    if hub.offline:
        lines.append(
            f"{hub.offline} is set, so kzoo did not connect. Unset it to "
            "download, or:")
    else:
        lines.append(f"Check the name, the connection to {hub.endpoint} "
                     "and HF_TOKEN (gated or private repositories), or:")
    lines.append(
        f"download the repository's config.json, weights and tokenizer "
        f"files from {hub.url} into a folder DIR and call from_preset(DIR)"
        + (f", or run `kzoo convert DIR {dest}`." if dest else "."))
    return "\n".join(lines)


def _fetch_checkpoint(hub, folder):
    """Fetch the files of a Hugging Face checkpoint that a conversion reads
    (config, one weights layout, tokenizer, sentence-transformers set-up),
    probing for the weights layout in kzoo's order of preference."""

    def get(name, required=True):
        if not _safe_relative(name):
            raise DownloadError(f"refusing a file name outside the "
                                f"repository: {name!r}")
        path = hub.fetch(name, required=required)
        if path is None:
            return False
        _place(path, folder / name)
        return True

    get("config.json")
    if not get(SAFETENSORS, required=False):
        if get(SAFETENSORS_INDEX, required=False):
            _get_shards(folder / SAFETENSORS_INDEX, get)
        elif not get(TORCH_BIN, required=False):
            if get(TORCH_BIN_INDEX, required=False):
                _get_shards(folder / TORCH_BIN_INDEX, get)
            else:
                where = ("huggingface_hub's cache holds none of"
                         if hub.offline or hub.unreachable else "has no")
                raise FileUnavailable(
                    f"{hub.repo}@{hub.commit or hub.revision} {where} "
                    f"{SAFETENSORS}, {SAFETENSORS_INDEX}, {TORCH_BIN} or "
                    f"{TORCH_BIN_INDEX}.")
    for name in TOKENIZER_FILES:
        get(name, required=False)
    get("generation_config.json", required=False)  # generation settings
    # sentence-transformers folders: the pooling set-up.
    if get("modules.json", required=False):
        get("sentence_bert_config.json", required=False)
        try:
            modules = read_json(folder / "modules.json")
        except ValueError:
            modules = []
        for module in modules if isinstance(modules, list) else []:
            path = str(module.get("path", "")) if isinstance(module, dict) \
                else ""
            if path and _safe_relative(path):
                get(f"{path}/config.json", required=False)


def _get_shards(index_path, get):
    try:
        weight_map = read_json(index_path).get("weight_map", {})
    except (ValueError, AttributeError):
        raise DownloadError(f"{index_path.name} is not a shard index.") \
            from None
    for shard in sorted(set(weight_map.values())):
        get(shard)


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
    key = f"{name}-{_fingerprint(folder)}"
    dest = presets.cache_dir() / "converted" / key
    if not _is_complete(dest):
        with exclusive(f"converted--{key}", str(folder), verbose):
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


def _declares_source(preset):
    source = preset.metadata.get("source") or {}
    return isinstance(source.get("huggingface"), str) or \
        isinstance(source.get("python_package"), dict)


def fetch_preset_weights(preset, filename, looked, verbose=True):
    """The `presets` weight-source hook: provide `filename` for a preset
    from the sources its metadata declares (converted once into
    `<cache>/<name>`), or raise one `MissingWeightsError` saying what was
    tried and what to do. None for a preset that declares no source."""
    if not _declares_source(preset):
        return None
    source = preset.metadata.get("source") or {}
    dest = presets.cache_dir() / preset.name
    tried = []
    with exclusive(f"preset--{preset.name}", preset.name, verbose):
        if (dest / filename).is_file() and _is_complete(dest):
            return dest / filename  # another process converted it
        # Every conversion writes the backbone's weights: without them, a
        # complete folder's record says what to download again.
        if not _is_complete(dest) or \
                not (dest / presets.BACKBONE_WEIGHTS).is_file():
            done = _convert_from_sources(preset, source, dest, tried,
                                         verbose, _download_record(dest))
            if done and (dest / filename).is_file():
                return dest / filename
    raise presets.MissingWeightsError(
        _missing_message(preset, filename, looked, tried, source, dest))


def _download_record(dest):
    """The hub download recorded in the cached preset `dest` (its
    metadata.json's `source`, with a commit), or None."""
    try:
        source = read_json(Path(dest) / _COMPLETE).get("source") or {}
    except (OSError, ValueError, AttributeError):
        return None
    if isinstance(source, dict) and source.get("commit") and \
            isinstance(source.get("files"), list):
        return source
    return None


def _convert_from_sources(preset, source, dest, tried, verbose,
                          record=None):
    """Try the declared sources in order; True once one was converted.
    `record`: an earlier download of the hub source into `dest`, which a
    download now must reproduce (its commit, its files' sha256)."""
    package = source.get("python_package")
    if isinstance(package, dict):
        folder = _package_folder(package)
        if folder is not None:
            what = f"the Python package {package.get('name')}"
            _verify_declared(folder, _declared_files(package), what)
            _convert_for_preset(preset, folder, dest, verbose, {
                "python_package": package.get("name"),
                "path": str(folder)})
            return True
        tried.append(
            f"the Python package {package.get('name')!r} is not "
            f"installed (`pip install {package.get('name')}`; in a kzoo "
            f"clone, the `{package.get('extra')}` extra: "
            f"`pip install -e \".[{package.get('extra')}]\"`)"
            if package.get("extra") else
            f"installed (`pip install {package.get('name')}`)")
    repo = source.get("huggingface")
    if isinstance(repo, str):
        if record is not None and record.get("huggingface") == repo:
            hub = HubRepo(repo, record["commit"], verbose, recorded={
                f["file"]: f["sha256"] for f in record["files"]
                if isinstance(f, dict) and f.get("sha256")})
        else:
            hub = HubRepo(repo, source.get("revision", "main"), verbose)
        try:
            _download_for_preset(preset, hub, _declared_files(source), dest,
                                 verbose)
            return True
        except DownloadError as e:
            if hub.offline:
                # A file missing from huggingface_hub's cache already
                # names the switch; say it once.
                why = ("" if hub.offline in str(e)
                       else f"{hub.offline} is set, so ")
                tried.append(f"{e} ({why}kzoo did not connect to "
                             f"{hub.url})")
            else:
                tried.append(f"fetching from {hub.url}: {e}")
    return False


def _convert_for_preset(preset, folder, dest, verbose, source):
    # The pretraining heads come along (task.weights.h5), so a task built
    # on the preset gets the checkpoint's MLM/NSP head, not a random one;
    # unless the preset says the checkpoint has none worth loading
    # (`"heads": []`: DeBERTa-v3's lm_predictions weights were not trained
    # as a masked LM; see its `heads_note`). A preset that names its task
    # (task.json: LaBSE's embedder, FinBERT's classifier) converts to it,
    # so the task's own head comes along.
    task = "backbone" if preset.metadata.get("heads") == [] else "pretraining"
    if preset.has("task.json"):
        task = preset.json("task.json")["class_name"]
    hf_to_preset(folder, dest, task=task, overwrite=True,
                 verbose=verbose, source=source,
                 expected_config=_config_check(preset),
                 metadata={"name": preset.name})


def _download_for_preset(preset, hub, files, dest, verbose):
    with staging_folder() as staging:
        if not files:  # [] -> probe the repository
            _fetch_checkpoint(hub, staging)
        for record in files:
            if not _safe_relative(record["name"]):
                raise DownloadError(f"bad file name {record['name']!r}")
            path = hub.fetch(record["name"], sha256=record.get("sha256"),
                             size=record.get("bytes"))
            _place(path, staging / record["name"])
        _convert_for_preset(preset, staging, dest, verbose,
                            hub.provenance())
    return dest


def _missing_message(preset, filename, looked, tried, source, dest):
    lines = [f"No weights for preset {preset.name!r}. Looked in:"]
    lines += [f"  - {p}" for p in looked]
    if tried:
        lines.append("Tried:")
        lines += [f"  - {t}" for t in tried]
    lines.append("To provide them, either:")
    repo = source.get("huggingface")
    switch = offline_switch()
    if repo and switch:
        lines.append(f"  - unset {switch.split('=')[0]} and call from_preset "
                     "again;")
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
    """The `presets` reference hook: a Preset for `hf://...` or a Hugging
    Face checkpoint folder; None for anything else."""
    if text.startswith("hf://"):
        return hf_preset(text)
    if os.path.isdir(text) and not (Path(text) / "metadata.json").exists() \
            and is_hf_folder(text):
        return local_hf_preset(text)
    return None


presets.register_reference_resolver(resolve_special)
presets.register_weight_source(fetch_preset_weights)

__all__ = ["endpoint", "exclusive", "fetch_hf_repo", "fetch_preset_weights",
           "hf_preset", "hub_cache_dir", "local_hf_preset", "parse_hf_uri",
           "resolve_special", "staging_folder"]
