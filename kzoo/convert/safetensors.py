"""The safetensors format, through the `safetensors` package's NumPy API.

`safe_open(path, framework="np")` parses and validates the header when the
file is opened: every offset against the file's real size, no overlaps,
no gaps, known dtypes. So a truncated or corrupt file fails at open, before
any tensor is read; kzoo turns that into a `SafetensorsError` naming the
file. Names, shapes and dtypes come from the header alone
(`get_slice(name).get_shape()`), so a conversion checks every tensor
against the model before it reads one. No torch is involved.

What kzoo still does itself, and why:

- bfloat16: NumPy has no bfloat16 of its own; `safetensors` returns
  bfloat16 tensors as `ml_dtypes.bfloat16` arrays (ml_dtypes, which Keras
  depends on and imports, registers the type with NumPy); kzoo widens
  them to float32, exactly.
- dtypes NumPy cannot hold (float8 and smaller) are refused at open, by
  name, with the tensor that has one, instead of failing on first read.
- writing: `safetensors.numpy.save_file` writes in place and reads each
  array through its data pointer, so kzoo makes arrays contiguous first
  and writes to a temporary name renamed into place (`atomic_write`):
  an interrupted export never leaves half a file.
"""

from pathlib import Path

import numpy as np

from kzoo.convert.errors import ConversionError
from kzoo.utils.files import atomic_write

# The safetensors dtypes kzoo reads (NumPy has them, or ml_dtypes for
# BF16, which is widened to float32).
READABLE_DTYPES = ("BOOL", "U8", "I8", "U16", "I16", "U32", "I32", "U64",
                   "I64", "F16", "BF16", "F32", "F64")


class SafetensorsError(ConversionError):
    """A safetensors file that is truncated, corrupt or not safetensors."""


class TensorInfo:
    """One tensor's entry in a safetensors header."""

    __slots__ = ("name", "dtype", "shape")

    def __init__(self, name, dtype, shape):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)

    def __repr__(self):
        return f"TensorInfo({self.name!r}, {self.dtype}, {self.shape})"


def _open(path):
    # Keras imports ml_dtypes (one of its own dependencies), which makes
    # "bfloat16" a NumPy dtype for safetensors to return BF16 tensors as.
    import keras  # noqa: F401
    from safetensors import SafetensorError, safe_open
    size = path.stat().st_size
    try:
        return safe_open(str(path), framework="np")
    except SafetensorError as e:
        raise SafetensorsError(
            f"{path}: not a readable safetensors file ({size} bytes): {e}. "
            "A truncated or interrupted download, or another format?"
        ) from None


class SafetensorsFile:
    """A safetensors file opened for reading, its header checked.

    Example:
    ```python
    with SafetensorsFile("model.safetensors") as f:
        for name in f.keys():
            print(name, f.info(name).shape)
        embeddings = f.get("embeddings.word_embeddings.weight")
    ```
    """

    def __init__(self, path):
        self.path = Path(path)
        self._handle = _open(self.path)
        self.metadata = self._handle.metadata() or {}
        self._infos = {}
        for name in self._handle.keys():
            view = self._handle.get_slice(name)
            dtype = view.get_dtype()
            if dtype not in READABLE_DTYPES:
                self.close()
                raise SafetensorsError(
                    f"{self.path}: tensor {name!r} has dtype {dtype}, which "
                    f"kzoo cannot read (readable: "
                    f"{', '.join(READABLE_DTYPES)}).")
            self._infos[name] = TensorInfo(name, dtype, view.get_shape())

    # ------------------------------------------------------------------
    def keys(self):
        return list(self._infos)

    def __contains__(self, name):
        return name in self._infos

    def info(self, name):
        return self._infos[name]

    def get(self, name):
        """The tensor `name` as a writable NumPy array in native byte
        order (BF16 widened to float32)."""
        if self._handle is None:
            raise SafetensorsError(f"{self.path} is closed.")
        array = self._handle.get_tensor(name)
        if self._infos[name].dtype == "BF16":
            return array.astype(np.float32)
        if not array.dtype.isnative:
            array = array.astype(array.dtype.newbyteorder("="))
        return array if array.flags.writeable else array.copy()

    def close(self):
        handle, self._handle = getattr(self, "_handle", None), None
        if handle is not None:
            handle.__exit__(None, None, None)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def load_file(path):
    """Every tensor of a safetensors file, as `{name: numpy array}`."""
    with SafetensorsFile(path) as f:
        return {name: f.get(name) for name in f.keys()}


def save_file(tensors, path, metadata=None):
    """Write `{name: numpy array}` as safetensors, atomically.

    `metadata` (str -> str) goes in `__metadata__`; Hugging Face
    `transformers` wants `{"format": "pt"}` there, which is the default.
    """
    from safetensors.numpy import save_file as write
    metadata = {"format": "pt", **(metadata or {})}
    arrays = {}
    for name, value in tensors.items():
        array = np.ascontiguousarray(value)
        if array.dtype.kind not in "biuf" or array.dtype.itemsize > 8:
            raise SafetensorsError(
                f"Cannot write tensor {name!r} of numpy dtype {array.dtype}.")
        arrays[name] = array
    return atomic_write(path, lambda tmp: write(
        arrays, tmp, metadata={str(k): str(v) for k, v in metadata.items()}))
