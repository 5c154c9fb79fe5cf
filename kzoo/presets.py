"""The preset registry: named presets, preset folders, and where weights are.

A preset is a folder (see `presets/README.md`):

    metadata.json     name, aliases, description, parameter count, license,
                      source, weight files (with sha256)
    config.json       {"class_name": "BertBackbone", "config": {...}}
    tokenizer.json    the tokenizer's class and config; its asset files
                      (e.g. vocab.txt) lie beside it
    preprocessor.json optional: the preprocessor's class and config
    task.json         optional: a saved task's class and config
    model.weights.h5  backbone weights, when shipped or saved
    task.weights.h5   task-head weights, when saved from a task

Named presets ship inside the package. Weights that are too large to ship
are looked up in the local cache (`KZOO_CACHE`, default `~/.cache/kzoo`),
under `<cache>/<preset name>/`.

This module fetches and converts nothing itself: the arrows point from
`kzoo.convert` to here, never back. `kzoo.convert` (imported by `import
kzoo`) registers two hooks:

- a *reference resolver* (`register_reference_resolver`): given the text a
  user passed to `from_preset` (`hf://org/name`, a Hugging Face checkpoint
  folder), it returns a `Preset`, or None when the text is not its kind;
- a *weight source* (`register_weight_source`): given a preset that lacks
  a weights file, it provides the file (e.g. downloads and converts what
  the preset's metadata declares) and returns its path, raises
  `MissingWeightsError` saying what it tried, or returns None when the
  preset declares nothing it can fetch.

Example:
```python
from kzoo import presets
# A preset folder of one's own (the examples below start from it): a
# tiny BERT, saved.
backbone = kzoo.BertBackbone.from_preset("bert_tiny_en_uncased",
                                         load_weights=False)
backbone.save_to_preset("my_preset")
assert presets.resolve("my_preset").has("model.weights.h5")
```
"""

import contextlib
import contextvars
import difflib
import os
import shutil
import tempfile
from pathlib import Path

from kzoo.utils import storage
from kzoo.utils.files import JSONFileError, read_json, swap_into_place

BACKBONE_WEIGHTS = "model.weights.h5"
TASK_WEIGHTS = "task.weights.h5"


class PresetError(ValueError):
    """A preset name, folder or file that cannot be used as asked.

    Example:
    ```python
    from kzoo import presets
    try:
        presets.resolve("bert_bsae")
    except presets.PresetError as error:
        print(error)   # names the closest presets
    ```
    """


class MissingWeightsError(FileNotFoundError):
    """`load_weights=True` but no weights file exists where we look.

    Example:
    ```python
    # Setup: the example of kzoo.presets (backbone, saved as my_preset).
    import os
    os.remove("my_preset/model.weights.h5")
    try:
        kzoo.BertBackbone.from_preset("my_preset")
    except presets.MissingWeightsError as error:
        print(error)   # where it looked, and how to get them
    else:
        raise AssertionError("expected MissingWeightsError")
    ```
    """


class RandomHeadWarning(UserWarning):
    """A task head that pretraining trains has no pretrained weights in the
    preset, so it starts from random initialisation.

    Example:
    ```python
    import warnings
    from kzoo import presets
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        kzoo.BertMaskedLM.from_preset("all_minilm_l6_v2")  # an encoder only
    assert any(issubclass(w.category, presets.RandomHeadWarning)
               for w in caught)
    ```
    """


# Hooks that kzoo.convert registers on import, keyed by the function's
# qualified name, so that re-importing a module replaces its hooks.
_REFERENCE_RESOLVERS = {}
_WEIGHT_SOURCES = {}


def _hook_key(hook):
    name = getattr(hook, "__qualname__", None) or repr(hook)
    return f"{getattr(hook, '__module__', '')}.{name}"


def register_reference_resolver(resolver):
    """Register `resolver(text) -> Preset | None`, asked (in registration
    order) about every preset reference that is not a kzoo preset folder.
    Returns `resolver`, so it also works as a decorator.

    Example:
    ```python
    # Setup: the example of kzoo.presets (backbone, saved as my_preset).
    import os
    shelf = os.path.abspath(".")   # the team's shared presets: here

    @presets.register_reference_resolver
    def team_presets(text):
        # "team:<name>": a folder of the team's shared presets.
        if text.startswith("team:"):
            return presets.Preset(os.path.join(shelf, text[5:]))
        return None   # not ours: the next resolver is asked

    again = kzoo.BertBackbone.from_preset("team:my_preset")
    assert again.count_params() == backbone.count_params()
    ```
    """
    _REFERENCE_RESOLVERS[_hook_key(resolver)] = resolver
    return resolver


def register_weight_source(source):
    """Register `source(preset, filename, looked) -> Path | None`, asked
    (in registration order) for a weights file that is neither in the
    preset folder nor in the cache; `looked` lists where it was looked
    for. Returns `source`.

    Example:
    ```python
    # Setup: the example of kzoo.presets (backbone, saved as my_preset).
    import shutil
    from pathlib import Path
    # The weights kept apart from the folder (e.g. on a shared disk).
    store = Path("weights_store").absolute()
    store.mkdir()
    shutil.move("my_preset/model.weights.h5", store / "my_preset.weights.h5")

    @presets.register_weight_source
    def from_store(preset, filename, looked):
        stored = store / f"{preset.path.name}.weights.h5"
        if filename == "model.weights.h5" and stored.is_file():
            return stored
        return None   # not ours: the next source is asked

    again = kzoo.BertBackbone.from_preset("my_preset")
    np.testing.assert_array_equal(
        keras.ops.convert_to_numpy(again.weights[0]),
        keras.ops.convert_to_numpy(backbone.weights[0]))
    ```
    """
    _WEIGHT_SOURCES[_hook_key(source)] = source
    return source


def builtin_presets_dir():
    """Named presets: inside the installed wheel, or the source checkout.

    Example:
    ```python
    from kzoo import presets
    assert (presets.builtin_presets_dir() / "gpt2_base_en").is_dir()
    ```
    """
    package_dir = Path(__file__).resolve().parent
    for candidate in (package_dir / "_presets", package_dir.parent / "presets"):
        if candidate.is_dir():
            return candidate
    raise PresetError(
        "kzoo's preset folder is missing from this installation; reinstall "
        "kzoo (`pip install kzoo`).")


def cache_dir():
    """Where downloaded and converted presets are kept: `$KZOO_CACHE`, or
    `~/.cache/kzoo`.

    Example:
    ```python
    from kzoo import presets
    print(presets.cache_dir())   # ~/.cache/kzoo, or $KZOO_CACHE
    ```
    """
    return Path(os.environ.get("KZOO_CACHE") or
                Path.home() / ".cache" / "kzoo").expanduser()


# Preset files that hold `{"class_name": ..., "config": {...}}`.
CLASS_ENTRY_FILES = ("config.json", "tokenizer.json", "preprocessor.json",
                     "task.json")


class Preset:
    """A preset folder on disk, with its metadata.

    Example:
    ```python
    from kzoo import presets
    preset = presets.resolve("gpt2")
    assert preset.json("config.json")["class_name"] == "GPT2Backbone"
    ```
    """

    def __init__(self, path, name=None):
        self.path = Path(path)
        self.name = name or self.path.name
        self.metadata = {}
        if (self.path / "metadata.json").exists():
            self.metadata = self.json("metadata.json")
        self.name = name or self.metadata.get("name") or self.path.name

    def __repr__(self):
        return f"Preset({self.name!r}, path={str(self.path)!r})"

    def has(self, filename):
        return (self.path / filename).exists()

    def file(self, filename):
        path = self.path / filename
        if not path.exists():
            raise PresetError(
                f"Preset {self.name!r} ({self.path}) has no {filename!r}. "
                "A preset folder needs metadata.json, config.json and "
                "tokenizer.json; save one with `save_to_preset(dir)`.")
        return path

    def json(self, filename):
        """A JSON file of the preset, parsed and checked for the shape kzoo
        reads: metadata.json an object; config.json, tokenizer.json,
        preprocessor.json and task.json `{"class_name": ..., "config":
        {...}}`. A broken file is a PresetError naming it and what to
        do."""
        path = self.file(filename)
        try:
            # (The hint resolves folders: worked out only for an error.)
            data = read_json(path, fix=self.restore_hint)
        except JSONFileError as e:
            raise PresetError(f"Preset {self.name!r}: {e}") from None
        problem = None
        if not isinstance(data, dict):
            problem = f"holds a JSON {type(data).__name__}, not an object"
        elif filename in CLASS_ENTRY_FILES and not (
                isinstance(data.get("class_name"), str)
                and isinstance(data.get("config"), dict)):
            problem = ('lacks a "class_name" (a string) and "config" (an '
                       "object)")
        if problem:
            raise PresetError(
                f"Preset {self.name!r}: {path} {problem}; kzoo cannot read "
                f"it. {self.restore_hint()}")
        return data

    def restore_hint(self):
        """What to do about a damaged file of this preset."""
        try:
            builtin = builtin_presets_dir().resolve()
        except PresetError:
            builtin = None
        folder = self.path.resolve()
        if builtin is not None and builtin in folder.parents:
            return ("The preset ships with kzoo: reinstall it (`pip install "
                    "--force-reinstall kzoo`).")
        if cache_dir().resolve() in folder.parents:
            return (f"It is in kzoo's cache: delete {self.path} and load the "
                    "preset again (it is downloaded or converted anew).")
        return ("Restore the file, or save the preset again with "
                "`save_to_preset(...)`.")

    def weight_locations(self, filename=BACKBONE_WEIGHTS):
        """Where `filename` is looked for, in order."""
        return [self.path / filename, cache_dir() / self.name / filename]

    def find_weights_file(self, filename):
        """The first existing `filename` in `weight_locations`, or None
        (nothing is fetched)."""
        for location in self.weight_locations(filename):
            if location.exists():
                return location
        return None

    def weights_file(self, filename=BACKBONE_WEIGHTS):
        """The path of `filename`: from the preset folder, the cache, or
        a registered weight source (kzoo.convert's downloads and
        conversions of what the metadata declares)."""
        locations = self.weight_locations(filename)
        found = self.find_weights_file(filename)
        if found is not None:
            return found
        for source in tuple(_WEIGHT_SOURCES.values()):
            path = source(self, filename, locations)
            if path is not None:
                return Path(path)
        looked = "\n".join(f"  - {p}" for p in locations)
        source = self.metadata.get("source", {})
        how = source.get("how_to_get") or (
            "convert the original checkpoint with `kzoo convert SRC "
            f"{cache_dir() / self.name}`")
        raise MissingWeightsError(
            f"No weights for preset {self.name!r}. Looked in:\n{looked}\n"
            f"To get them: {how}. Or pass load_weights=False for a randomly "
            "initialised model.")


# The staging folder of each preset folder being written in this context,
# so that nested writers (a task writes its backbone, then its
# preprocessor) share one staging folder and one swap.
_STAGING = contextvars.ContextVar("kzoo_preset_staging", default={})


def _prefill(source, staging):
    """Give `staging` the files `source` has (hard links where the file
    system allows, else copies): saving into an existing preset folder
    replaces the files it writes and keeps the others. Writers must
    replace a file (`kzoo.utils.files.atomic_write`), never modify one in
    place, which would change the old preset's file through the link."""
    if not source.is_dir():
        return
    def link_or_copy(src, dest):
        try:
            os.link(src, dest)
        except OSError:
            shutil.copy2(src, dest)
    for entry in source.iterdir():
        if entry.name.startswith(".") and (".staging-" in entry.name
                                           or ".old-" in entry.name
                                           or ".partial-" in entry.name):
            continue  # debris of an interrupted write
        if entry.is_dir() and not entry.is_symlink():
            shutil.copytree(entry, staging / entry.name,
                            copy_function=link_or_copy, symlinks=True)
        else:
            link_or_copy(entry, staging / entry.name)


@contextlib.contextmanager
def staged_folder(preset_dir):
    """Write a preset folder whole or not at all.

    Yields a staging folder beside `preset_dir` (hidden:
    `.<name>.staging-*`) that starts with the files `preset_dir` already
    has; write into it. When the block ends normally the staging folder
    replaces `preset_dir`; on an exception it is deleted. A process killed
    mid-write leaves `preset_dir` exactly as it was, and a hidden
    `.<name>.staging-*` folder beside it that nothing reads (delete it at
    will). Nested calls for the same folder share the outer staging
    folder.

    The files it starts with are hard links to the old ones (where the
    file system allows): replace a file (write a new one, or
    `kzoo.utils.files.atomic_write`), never modify one in place, which
    would change the old folder's file too.

    The swap is two renames (the old folder aside, the new one in), so a
    kill in the microseconds between them leaves the complete old folder
    as `.<name>.old-*` rather than at `preset_dir`.

    Example:
    ```python
    from pathlib import Path
    from kzoo import presets
    with presets.staged_folder("my_preset") as staging:
        (staging / "notes.txt").write_text("first")
        assert not Path("my_preset/notes.txt").exists()   # not yet
    assert Path("my_preset/notes.txt").read_text() == "first"
    try:
        with presets.staged_folder("my_preset") as staging:
            assert (staging / "notes.txt").exists()   # the old files
            (staging / "more.txt").write_text("half-written")
            raise RuntimeError("interrupted")
    except RuntimeError:
        pass
    assert not Path("my_preset/more.txt").exists()   # all or nothing
    ```
    """
    preset_dir = Path(preset_dir)
    key = str(preset_dir.resolve())
    active = _STAGING.get()
    if key in active:
        yield active[key]
        return
    preset_dir.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(dir=preset_dir.parent,
                                    prefix=f".{preset_dir.name}.staging-"))
    token = _STAGING.set({**active, key: staging})
    try:
        _prefill(preset_dir, staging)
        yield staging
        swap_into_place(staging, preset_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    finally:
        _STAGING.reset(token)


# The files a kzoo preset folder is recognised by. A config or tokenizer
# file counts only in kzoo's own form (exactly a class name and its
# config): Hugging Face's config.json and tokenizer.json, and keras-hub's
# files (which also name a module), have the same names. (A tokenizer.json
# may also say which preset's files it uses: `assets_from`.)
_PRESET_FILES = ("metadata.json", "config.json", "tokenizer.json",
                 "preprocessor.json", "task.json")


def check_destination(preset_dir):
    """Refuse to save a preset onto `preset_dir` unless it is missing, an
    empty folder, or a kzoo preset folder: saving replaces the folder, so
    a path to a file (`my_model/config.json`) or a folder of other files
    (a Hugging Face checkpoint, a project) would be moved aside and lost.
    Raises `PresetError`, having touched nothing. Every `save_to_preset`
    calls it first (`staged_folder`, a folder written whole, does not: it
    is not only for presets).

    Example:
    ```python
    from pathlib import Path
    from kzoo import presets
    presets.check_destination("a_new_folder")   # missing: fine
    Path("notes").mkdir()
    Path("notes/todo.txt").write_text("not a preset")
    try:
        presets.check_destination("notes")
    except presets.PresetError as e:
        assert "no kzoo preset" in str(e)
    ```
    """
    path = Path(preset_dir)
    staging = {Path(folder).resolve() for folder in _STAGING.get().values()}
    if not path.exists() or path.resolve() in staging:
        return   # (a staging folder's destination was checked already)
    if not path.is_dir():
        raise PresetError(
            f"Cannot save a preset to {path}: it is a file, and a preset is "
            f"a folder. Give a folder's path (e.g. {path.parent}, or a new "
            f"folder); {path} was left as it was.")
    names = sorted(p.name for p in path.iterdir()
                   if not p.name.startswith("."))
    if not names or _is_kzoo_preset(path):
        return
    shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
    raise PresetError(
        f"Cannot save a preset into {path}: the folder holds other files "
        f"({shown}) and no kzoo preset, and saving would replace or mix "
        "with them. Save to a new or empty folder; nothing was written.")


def _is_kzoo_preset(path):
    for name in _PRESET_FILES:
        try:
            data = read_json(path / name)
        except (OSError, JSONFileError, ValueError):
            continue
        if not isinstance(data, dict):
            continue
        if name == "metadata.json" and ("class_name" in data
                                        or "family" in data):
            return True
        if {"class_name", "config"} <= set(data) <= {
                "class_name", "config", "assets_from"}:
            return True
    return False


@contextlib.contextmanager
def own_staging(folder):
    """Mark `folder`, a staging folder kzoo is filling (a conversion's),
    as a preset being written, so that saves into it while it holds only
    some of its files pass `check_destination`.

    Example:
    ```python
    from pathlib import Path
    from kzoo import presets
    Path("staging").mkdir()
    Path("staging/vocab.txt").write_text("[PAD]")   # written first
    with presets.own_staging("staging"):
        presets.check_destination("staging")   # kzoo's own: fine
    ```
    """
    folder = Path(folder)
    token = _STAGING.set({**_STAGING.get(), str(folder.resolve()): folder})
    try:
        yield folder
    finally:
        _STAGING.reset(token)


# The named presets' metadata, read again only when a metadata file
# changes: every `from_preset` resolves names several times (backbone,
# tokenizer, preprocessor), and parsing every metadata.json took ~5 ms
# each time (a registry-wide bad-input test spent 9 s of 31 there).
_NAMED_PRESETS = {}  # root -> (the files' (path, mtime, size), metadata)


def _named_presets():
    """The presets folder and {name: metadata} of every named preset.
    The dict is shared: read it, never change it."""
    root = builtin_presets_dir()
    files = sorted(root.glob("*/metadata.json"))
    stats = [f.stat() for f in files]
    stamp = tuple((str(f), s.st_mtime_ns, s.st_size)
                  for f, s in zip(files, stats))
    cached = _NAMED_PRESETS.get(root)
    if cached is None or cached[0] != stamp:
        cached = (stamp, {f.parent.name: Preset(f.parent).metadata
                          for f in files})
        _NAMED_PRESETS[root] = cached
    return root, cached[1]


def _aliases(presets):
    return {alias: name for name, meta in presets.items()
            for alias in meta.get("aliases", [])}


def list_presets(family=None):
    """Every named preset: name, aliases, family, description, parameters.

    Example:
    ```python
    from kzoo import presets
    names = [row["name"] for row in presets.list_presets(family="bert")]
    assert "bert_base_en_uncased" in names
    ```
    """
    _, presets = _named_presets()
    rows = []
    for name, meta in presets.items():
        if family and meta.get("family") != family:
            continue
        rows.append({
            "name": name,
            # A copy: the metadata is shared (and `list` here is
            # list_presets, bound at the end of the module).
            "aliases": [*meta.get("aliases", [])],
            "family": meta.get("family"),
            "description": meta.get("description", ""),
            "params": meta.get("params"),
        })
    return rows


def resolve(name_or_dir):
    """A `Preset` for a preset name, an alias, or a preset folder.

    Example:
    ```python
    from kzoo import presets
    preset = presets.resolve("bert_base")   # an alias
    assert preset.name == "bert_base_en_uncased"
    assert preset.has("vocab.txt")
    ```
    """
    if isinstance(name_or_dir, Preset):
        return name_or_dir
    if not isinstance(name_or_dir, (str, os.PathLike)):
        raise PresetError(
            f"A preset is a name or a folder path, not {type(name_or_dir)}.")
    text = os.fspath(name_or_dir)
    if storage.is_url(text) and not text.startswith("hf://"):
        # A preset folder committed at a URL (`kzoo pretrain`'s, or
        # `kzoo/utils/storage.py`'s commit_folder): its local copy.
        copy = storage.CachedFolder(text, cache_dir() / "storage",
                                    what="preset")
        copy.fetch(*copy.marker["files"])
        return _folder_preset(copy.local)
    asked = text.startswith("hf://") or (os.path.isdir(text) and not (
        Path(text) / "metadata.json").exists())
    if asked:
        # hf://org/name, or a Hugging Face checkpoint folder: the
        # registered resolvers convert it (once, into the cache).
        special = _ask_resolvers(text)
        if special is not None:
            return special
        if text.startswith("hf://"):
            raise PresetError(
                f"{text!r}: hf:// references are resolved by kzoo.convert, "
                "which is not loaded; `import kzoo` loads it.")
    if os.path.isdir(text):
        return _folder_preset(Path(text))
    root, presets = _named_presets()
    aliases = _aliases(presets)
    name = aliases.get(text, text)
    if name in presets:
        return Preset(root / name, name=name)
    # Any other reference (a scheme of the user's, "team:name"): the
    # registered resolvers, after the named presets so none is shadowed.
    special = None if asked else _ask_resolvers(text)
    if special is not None:
        return special
    if "/" in text or os.sep in text:
        raise PresetError(f"Preset folder {text!r} does not exist.")
    known = sorted(presets) + sorted(aliases)
    # Three at most: the error is one line (the whole list is 1 KB).
    close = difflib.get_close_matches(text, known, n=3, cutoff=0.5)
    hint = f" Did you mean: {', '.join(close)}?" if close else ""
    raise PresetError(
        f"Unknown preset {text!r}.{hint} `kzoo presets` (or "
        "kzoo.presets.list()) lists every named preset.")


def _ask_resolvers(text):
    """The first registered resolver's Preset for `text`, or None."""
    for resolver in tuple(_REFERENCE_RESOLVERS.values()):
        special = resolver(text)
        if special is not None:
            return special
    return None


def _folder_preset(path):
    if (path / "metadata.json").exists() or (path / "config.json").exists():
        return Preset(path)
    raise PresetError(
        f"{path} is not a preset folder: it has no metadata.json or "
        "config.json.")


# `kzoo.presets.list()` reads naturally; defined last so the builtin `list`
# stays usable above.
list = list_presets  # noqa: A001
