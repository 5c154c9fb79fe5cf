"""The safetensors format, read and written with numpy alone.

A safetensors file is an 8-byte little-endian header length `N`, `N` bytes
of JSON (`{name: {"dtype", "shape", "data_offsets": [begin, end]}, ...,
"__metadata__": {...}}`), then the raw little-endian tensor bytes. The
format is simple enough that kzoo reads and writes it itself: no torch, no
compiled extension at run time, bfloat16 supported (numpy has no bfloat16,
so `safetensors.numpy` cannot read it), and every offset is checked against
the file's real size before a byte of tensor data is read, so a truncated
or corrupt file fails at open with a message naming the file and the
tensor, not deep inside a conversion.
"""

import json
import mmap
import os
import struct
from pathlib import Path

import numpy as np

from kzoo.convert.errors import ConversionError
from kzoo.utils.files import atomic_write

# safetensors dtype -> numpy dtype (little-endian). BF16 is read as uint16
# and widened to float32 on read.
_DTYPES = {
    "BOOL": np.dtype("bool"),
    "U8": np.dtype("uint8"),
    "I8": np.dtype("int8"),
    "U16": np.dtype("<u2"),
    "I16": np.dtype("<i2"),
    "U32": np.dtype("<u4"),
    "I32": np.dtype("<i4"),
    "U64": np.dtype("<u8"),
    "I64": np.dtype("<i8"),
    "F16": np.dtype("<f2"),
    "BF16": np.dtype("<u2"),
    "F32": np.dtype("<f4"),
    "F64": np.dtype("<f8"),
}
_NUMPY_TO_SAFETENSORS = {
    np.dtype(v).newbyteorder("<").str: k for k, v in _DTYPES.items()
    if k != "BF16"
}
_MAX_HEADER_BYTES = 100 * 1024 * 1024


class SafetensorsError(ConversionError):
    """A safetensors file that is truncated, corrupt or not safetensors."""


class TensorInfo:
    """One tensor's entry in a safetensors header."""

    __slots__ = ("name", "dtype", "shape", "begin", "end")

    def __init__(self, name, dtype, shape, begin, end):
        self.name, self.dtype, self.shape = name, dtype, tuple(shape)
        self.begin, self.end = begin, end

    def __repr__(self):
        return f"TensorInfo({self.name!r}, {self.dtype}, {self.shape})"


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
        self._file = None
        self._mmap = None
        size = self.path.stat().st_size
        with open(self.path, "rb") as f:
            prefix = f.read(8)
            if len(prefix) < 8:
                raise self._error(f"is {size} bytes, too short to hold a "
                                  "safetensors header (truncated?)")
            (header_len,) = struct.unpack("<Q", prefix)
            if header_len > _MAX_HEADER_BYTES or 8 + header_len > size:
                raise self._error(
                    f"declares a {header_len}-byte header but the file is "
                    f"{size} bytes: truncated or not a safetensors file")
            raw = f.read(header_len)
        try:
            header = json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError) as e:
            raise self._error(f"has an unreadable JSON header ({e})") from None
        if not isinstance(header, dict):
            raise self._error("has a header that is not a JSON object")
        self.metadata = header.pop("__metadata__", None) or {}
        self.data_start = 8 + header_len
        data_size = size - self.data_start
        self._infos = {}
        for name, entry in header.items():
            self._infos[name] = self._check_entry(name, entry, data_size)
        self._check_no_overlap()

    def _error(self, message):
        return SafetensorsError(f"{self.path}: {message}.")

    def _check_entry(self, name, entry, data_size):
        try:
            dtype, shape = entry["dtype"], entry["shape"]
            begin, end = entry["data_offsets"]
        except (KeyError, TypeError, ValueError):
            raise self._error(f"tensor {name!r} has a malformed header entry "
                              f"{entry!r}") from None
        if dtype not in _DTYPES:
            raise self._error(
                f"tensor {name!r} has dtype {dtype}, which kzoo cannot read "
                f"(readable: {', '.join(sorted(_DTYPES))})")
        if (not isinstance(shape, list) or
                not all(isinstance(d, int) and d >= 0 for d in shape)):
            raise self._error(f"tensor {name!r} has a bad shape {shape!r}")
        expected = int(np.prod(shape, dtype=np.int64)) * _DTYPES[dtype].itemsize
        if not (isinstance(begin, int) and isinstance(end, int)
                and 0 <= begin <= end):
            raise self._error(f"tensor {name!r} has bad offsets "
                              f"[{begin}, {end}]")
        if end - begin != expected:
            raise self._error(
                f"tensor {name!r} ({dtype}, shape {shape}) needs {expected} "
                f"bytes but its offsets span {end - begin}")
        if end > data_size:
            raise self._error(
                f"tensor {name!r} ends at byte {end} of the data section, "
                f"which holds only {data_size} bytes: the file is truncated")
        return TensorInfo(name, dtype, shape, begin, end)

    def _check_no_overlap(self):
        spans = sorted((i.begin, i.end, i.name) for i in self._infos.values()
                       if i.end > i.begin)
        for (_, end, name), (begin, _, other) in zip(spans, spans[1:]):
            if begin < end:
                raise self._error(f"tensors {name!r} and {other!r} overlap")

    # ------------------------------------------------------------------
    def keys(self):
        return list(self._infos)

    def __contains__(self, name):
        return name in self._infos

    def info(self, name):
        return self._infos[name]

    def _buffer(self):
        if self._mmap is None:
            self._file = open(self.path, "rb")
            if os.fstat(self._file.fileno()).st_size == 0:
                return b""
            self._mmap = mmap.mmap(self._file.fileno(), 0,
                                   access=mmap.ACCESS_READ)
        return self._mmap

    def get(self, name):
        """The tensor `name` as a numpy array (a copy; BF16 -> float32)."""
        info = self._infos[name]
        dtype = _DTYPES[info.dtype]
        count = int(np.prod(info.shape, dtype=np.int64))
        array = np.frombuffer(self._buffer(), dtype=dtype, count=count,
                              offset=self.data_start + info.begin)
        array = array.reshape(info.shape)
        if info.dtype == "BF16":
            return (array.astype(np.uint32) << 16).view(np.float32)
        return array.astype(dtype.newbyteorder("="), copy=True)

    def close(self):
        if self._mmap is not None:
            self._mmap.close()
            self._mmap = None
        if self._file is not None:
            self._file.close()
            self._file = None

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
    metadata = {"format": "pt", **(metadata or {})}
    header, arrays, offset = {}, [], 0
    for name in tensors:  # keep the caller's order
        array = np.ascontiguousarray(tensors[name])
        key = array.dtype.newbyteorder("<").str
        if array.dtype.byteorder == "|":
            key = array.dtype.str
        if key not in _NUMPY_TO_SAFETENSORS:
            raise SafetensorsError(
                f"Cannot write tensor {name!r} of numpy dtype {array.dtype}.")
        array = array.astype(array.dtype.newbyteorder("<"), copy=False)
        header[name] = {"dtype": _NUMPY_TO_SAFETENSORS[key],
                        "shape": list(array.shape),
                        "data_offsets": [offset, offset + array.nbytes]}
        arrays.append(array)
        offset += array.nbytes
    header["__metadata__"] = {str(k): str(v) for k, v in metadata.items()}
    raw = json.dumps(header, separators=(",", ":")).encode("utf-8")
    raw += b" " * (-len(raw) % 8)  # data starts 8-byte aligned

    def write(tmp):
        with open(tmp, "wb") as f:
            f.write(struct.pack("<Q", len(raw)))
            f.write(raw)
            for array in arrays:
                f.write(array.tobytes())

    return atomic_write(path, write)
