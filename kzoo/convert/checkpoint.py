"""A Hugging Face checkpoint folder, read without running any of its code.

The layout `transformers.save_pretrained` writes:

    config.json                      model_type, sizes, architectures
    model.safetensors                the weights, or
    model.safetensors.index.json     + model-0000x-of-0000n.safetensors, or
    pytorch_model.bin(.index.json)   older checkpoints (torch pickles)
    vocab.txt / tokenizer.json / tokenizer_config.json   tokenizer assets

Weights are read lazily, one tensor at a time, so a converter can check
every name and shape against the model before any tensor data is touched.
`pytorch_model.bin` is opened only with `torch.load(weights_only=True)`,
which refuses anything but tensors and plain containers; nothing else in
a checkpoint is ever unpickled or executed.
"""

import json
from pathlib import Path

import numpy as np

from kzoo.convert.errors import ConversionError
from kzoo.convert.safetensors import SafetensorsFile
from kzoo.utils.files import JSONFileError, read_json

SAFETENSORS = "model.safetensors"
SAFETENSORS_INDEX = "model.safetensors.index.json"
TORCH_BIN = "pytorch_model.bin"
TORCH_BIN_INDEX = "pytorch_model.bin.index.json"
# In the order they are preferred.
WEIGHT_FILES = (SAFETENSORS, SAFETENSORS_INDEX, TORCH_BIN, TORCH_BIN_INDEX)
TOKENIZER_FILES = ("vocab.txt", "tokenizer.json", "tokenizer_config.json",
                   "special_tokens_map.json")


def is_hf_folder(path):
    """True for a folder whose `config.json` is a Hugging Face config
    (it names a `model_type`) rather than a kzoo one (`class_name`).

    Example:
    ```python
    from kzoo import convert
    assert not convert.is_hf_folder(".")  # no config.json + weights here
    ```
    """
    config = Path(path) / "config.json"
    if not config.is_file():
        return False
    try:
        data = json.loads(config.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return (isinstance(data, dict) and "class_name" not in data
            and ("model_type" in data or "architectures" in data))


_JSON_FIX = ("Download the checkpoint's files again, or write the folder "
             "again with transformers' `save_pretrained`.")


def _read_json(path, what):
    try:
        return read_json(path, fix=_JSON_FIX)
    except FileNotFoundError:
        raise ConversionError(f"{path} does not exist ({what}).") from None
    except JSONFileError as e:
        raise ConversionError(f"{e} ({what})") from None


class TensorStore:
    """Names, shapes and (lazily) values of a checkpoint's tensors.

    `names()`, `shape(name)` and `dtype(name)` read only headers;
    `get(name)` reads one tensor as a numpy array.
    """

    def __init__(self, files, entries, description):
        self._files = files          # open readers, closed by close()
        self._entries = entries      # name -> (reader kind, handle)
        self._inner = {}             # name -> its name in its file, if other
        self.description = description

    # ------------------------------------------------------------------
    @classmethod
    def open(cls, folder):
        folder = Path(folder)
        for filename in WEIGHT_FILES:
            if (folder / filename).is_file():
                opener = {SAFETENSORS: cls._open_safetensors,
                          SAFETENSORS_INDEX: cls._open_safetensors_index,
                          TORCH_BIN: cls._open_torch,
                          TORCH_BIN_INDEX: cls._open_torch_index}[filename]
                return opener(folder / filename)
        raise ConversionError(
            f"{folder} holds no weights: expected one of "
            f"{', '.join(WEIGHT_FILES)}.")

    @classmethod
    def _open_safetensors(cls, path, shards=None):
        shards = shards or [path.name]
        files, entries = [], {}
        for shard in shards:
            reader = SafetensorsFile(path.parent / shard)
            files.append(reader)
            for name in reader.keys():
                if name in entries:
                    raise ConversionError(
                        f"Tensor {name!r} appears in two shards of {path}.")
                entries[name] = ("safetensors", reader)
        return cls(files, entries, str(path))

    @classmethod
    def _shards(cls, index_path):
        index = _read_json(index_path, "the shard index")
        weight_map = index.get("weight_map") if isinstance(index, dict) else None
        if not isinstance(weight_map, dict) or not weight_map:
            raise ConversionError(f"{index_path} has no 'weight_map'.")
        shards = sorted(set(weight_map.values()))
        for shard in shards:
            if "/" in shard or "\\" in shard or shard.startswith("."):
                raise ConversionError(
                    f"{index_path} names a shard outside its folder: {shard!r}.")
            if not (index_path.parent / shard).is_file():
                raise ConversionError(
                    f"{index_path} lists shard {shard!r}, which is missing "
                    f"from {index_path.parent}.")
        return weight_map, shards

    @classmethod
    def _open_safetensors_index(cls, index_path):
        weight_map, shards = cls._shards(index_path)
        store = cls._open_safetensors(index_path, shards)
        store.description = str(index_path)
        cls._check_index(store, weight_map, index_path)
        return store

    @staticmethod
    def _check_index(store, weight_map, index_path):
        missing = sorted(set(weight_map) - set(store._entries))
        if missing:
            raise ConversionError(
                f"{index_path} lists tensors that no shard holds: "
                f"{', '.join(missing[:10])}.")

    @classmethod
    def _open_torch(cls, path, shards=None):
        shards = shards or [path.name]
        entries = {}
        for shard in shards:
            state = _torch_load(path.parent / shard)
            for name, tensor in state.items():
                entries[name] = ("torch", tensor)
        return cls([], entries, str(path))

    @classmethod
    def _open_torch_index(cls, index_path):
        weight_map, shards = cls._shards(index_path)
        store = cls._open_torch(index_path, shards)
        cls._check_index(store, weight_map, index_path)
        return store

    def add(self, other, prefix):
        """Take `other`'s tensors in, each name under `prefix` (a
        sentence-transformers module's weights: `2_Dense/linear.weight`)."""
        for name, entry in other._entries.items():
            self._entries[prefix + name] = entry
            self._inner[prefix + name] = other._inner.get(name, name)
        self._files += other._files

    # ------------------------------------------------------------------
    def names(self):
        return list(self._entries)

    def __contains__(self, name):
        return name in self._entries

    def __len__(self):
        return len(self._entries)

    def shape(self, name):
        kind, handle = self._entries[name]
        if kind == "safetensors":
            return handle.info(self._inner.get(name, name)).shape
        return tuple(handle.shape)

    def dtype(self, name):
        kind, handle = self._entries[name]
        if kind == "safetensors":
            return handle.info(self._inner.get(name, name)).dtype
        return str(handle.dtype).replace("torch.", "")

    def get(self, name):
        kind, handle = self._entries[name]
        if kind == "safetensors":
            return handle.get(self._inner.get(name, name))
        import torch
        if handle.dtype == torch.bfloat16:
            handle = handle.float()
        return handle.detach().cpu().numpy().copy()

    def close(self):
        for reader in self._files:
            reader.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _torch_load(path):
    try:
        import torch
    except ImportError:
        raise ConversionError(
            f"{path} is a PyTorch pickle; reading it needs torch "
            "(`pip install torch`). Checkpoints saved as model.safetensors "
            "need no torch.") from None
    import pickle
    try:
        state = torch.load(path, map_location="cpu", weights_only=True,
                           mmap=True)
    except (pickle.UnpicklingError, RuntimeError, EOFError, ValueError,
            OSError) as e:
        first_line = str(e).strip().splitlines()[0] if str(e).strip() else ""
        raise ConversionError(
            f"{path} could not be read as a plain tensor file with "
            f"torch.load(weights_only=True): {type(e).__name__}: "
            f"{first_line}. kzoo never unpickles anything but tensors; "
            "a truncated file, or one holding code, ends here.") from None
    if not isinstance(state, dict) or not all(
            isinstance(k, str) and isinstance(v, torch.Tensor)
            for k, v in state.items()):
        raise ConversionError(
            f"{path} is not a state dict of named tensors.")
    return state


class HFCheckpoint:
    """A Hugging Face checkpoint folder: its config, tensors and tokenizer
    files.

    Example:
    ```python
    from kzoo import convert
    mlm = kzoo.BertMaskedLM.from_preset("bert_tiny_en_uncased",
                                        load_weights=False)
    convert.export_hf(mlm, "hf_out", verbose=False)
    with convert.HFCheckpoint("hf_out") as checkpoint:
        assert checkpoint.config["model_type"] == "bert"
        assert checkpoint.config["hidden_size"] == 128
    ```
    """

    def __init__(self, path, source=None):
        self.path = Path(path)
        if not self.path.is_dir():
            raise ConversionError(f"{self.path} is not a folder.")
        self.config = _read_json(self.path / "config.json",
                                 "a Hugging Face checkpoint needs config.json")
        if not isinstance(self.config, dict):
            raise ConversionError(f"{self.path / 'config.json'} is not a "
                                  "JSON object.")
        self.source = source or {"path": str(self.path.resolve())}
        self.tensors = TensorStore.open(self.path)
        for folder in self.module_weight_folders():
            self.tensors.add(TensorStore.open(self.path / folder),
                             prefix=f"{folder}/")

    def module_weight_folders(self):
        """The folders of the sentence-transformers modules after the
        transformer that hold weights of their own (a `Dense` layer's
        `2_Dense/`), as modules.json lists them; their tensors read as
        `<folder>/<name>`."""
        modules = self.json("modules.json") if self.has("modules.json") \
            else None
        folders = []
        for module in modules if isinstance(modules, list) else []:
            path = str(module.get("path", "")) if isinstance(module, dict) \
                else ""
            inside = path and ".." not in path and "\\" not in path \
                and not path.startswith("/") and "/" not in path.strip("/")
            if inside and any((self.path / path / f).is_file()
                              for f in WEIGHT_FILES):
                folders.append(path.strip("/"))
        return folders

    @property
    def model_type(self):
        return self.config.get("model_type")

    @property
    def architectures(self):
        return list(self.config.get("architectures") or [])

    def has(self, filename):
        return (self.path / filename).is_file()

    def file(self, filename):
        return self.path / filename if self.has(filename) else None

    def json(self, filename):
        """A JSON file of the folder, or None when it is absent."""
        if not self.has(filename):
            return None
        return _read_json(self.path / filename, filename)

    def close(self):
        self.tensors.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def as_float32(array):
    """Floating tensors become float32 (kzoo's default variable dtype)."""
    if np.issubdtype(array.dtype, np.floating) and array.dtype != np.float32:
        return array.astype(np.float32)
    return array
