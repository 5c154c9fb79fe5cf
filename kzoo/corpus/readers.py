"""Inputs that are tables, not text files: Parquet files and Hugging Face
`datasets` datasets. Each row is one document, its text in the column
`text_field` names (`"text"` by default), as a `.jsonl` line's is; rows
whose text is empty or null are skipped.

- `.parquet` files are read with pyarrow, one batch of rows at a time
  (memory: one batch, never the file).
- A folder written by `datasets`' `Dataset.save_to_disk` (it holds
  `state.json` and `dataset_info.json`) is read with `load_from_disk`
  (memory-mapped Arrow files). A `DatasetDict`'s folder (its splits
  saved together, `dataset_dict.json` beside one folder per split) is
  read by its `train` split; another split is named by its folder
  (`splits/validation`).
- A folder holding a dataset repository as the Hugging Face Hub stores
  one (a `README.md` whose YAML header names its `configs` or
  `dataset_info`, beside the data files; e.g. fetched with `hf download
  --repo-type dataset`) is read with `load_dataset(folder,
  split="train", streaming=True)`: its own configuration says which files
  and formats make its train split, and rows stream from disk. Nothing
  is fetched from the Hub.

pyarrow and `datasets` are optional: imported only to read such an
input, with an error that says what to install when missing. pyarrow
must be 14.0.1 or newer: older releases can run code that a crafted
Parquet file names (CVE-2023-47248), and reading a file never runs code.
"""

from pathlib import Path

from kzoo.corpus.shards import CorpusError

PARQUET = ".parquet"
SAVED_DATASET = "saved dataset"
SAVED_SPLITS = "saved splits"  # a DatasetDict's folder: its train split
DATASET_REPOSITORY = "dataset repository"
TABLE_KINDS = (PARQUET, SAVED_DATASET, SAVED_SPLITS, DATASET_REPOSITORY)
# The split of a DatasetDict folder that is prepared.
TRAIN_SPLIT = "train"
# Rows read at a time.
BATCH_ROWS = 1024
# The oldest pyarrow that runs no code a file names (CVE-2023-47248).
PYARROW_FLOOR = (14, 0, 1)


def folder_kind(folder):
    """`SAVED_DATASET`, `SAVED_SPLITS`, `DATASET_REPOSITORY` or None for a
    folder."""
    folder = Path(folder)
    if _is_saved_dataset(folder):
        return SAVED_DATASET
    if (folder / "dataset_dict.json").is_file():
        if _is_saved_dataset(folder / TRAIN_SPLIT):
            return SAVED_SPLITS
        splits = sorted(p.name for p in folder.iterdir() if p.is_dir())
        raise CorpusError(
            f"{folder} holds a dataset's splits ({', '.join(splits)}) and no "
            f"{TRAIN_SPLIT!r} split to prepare by default. Give the split "
            f"to prepare by its folder, e.g. {folder / splits[0]}."
            if splits else f"{folder} holds a dataset's splits file but no "
            "split folder: save the dataset again.")
    if _is_dataset_card(folder / "README.md"):
        return DATASET_REPOSITORY
    return None


def _is_saved_dataset(folder):
    return (folder / "state.json").is_file() and \
        (folder / "dataset_info.json").is_file()


def _is_dataset_card(path):
    """A Hub dataset card: YAML front matter naming `configs:` or
    `dataset_info:` (a plain README.md beside text files is none)."""
    if not path.is_file():
        return False
    with open(path, encoding="utf-8", errors="replace") as card:
        if card.readline().strip() != "---":
            return False
        for line in card:
            if line.strip() == "---":
                return False
            if line.startswith(("configs:", "dataset_info:")):
                return True
    return False


def folder_record(folder):
    """`{"path", "bytes", "mtime_ns"}` of a dataset folder: its files'
    bytes together and the newest one's time (what says it is
    unchanged)."""
    read = Path(folder) / TRAIN_SPLIT if folder_kind(folder) == \
        SAVED_SPLITS else Path(folder)  # the split that is prepared
    files = [p.stat() for p in read.rglob("*") if p.is_file()]
    return {"path": str(folder), "bytes": sum(s.st_size for s in files),
            "mtime_ns": max((s.st_mtime_ns for s in files), default=0)}


def table_documents(path, kind, field):
    """The texts of a table input's rows (see the module doc)."""
    if kind == SAVED_SPLITS:
        path, kind = Path(path) / TRAIN_SPLIT, SAVED_DATASET
    rows = {PARQUET: _parquet_rows, SAVED_DATASET: _saved_rows,
            DATASET_REPOSITORY: _streamed_rows}[kind](Path(path), field)
    for number, text in rows:
        text = document_text(text, f"{path}, row {number}", field, "column")
        if text is not None:
            yield text


def document_text(text, where, field, place):
    """One row's (or `.jsonl` line's) text, or None where it holds none
    (null or blank: the row is skipped); a value that is not a string is
    refused, naming `where` and the `place` ("column", "field") that
    `field` names."""
    if text is None:
        return None
    if not isinstance(text, str):
        raise CorpusError(
            f"{where}: the {field!r} {place} holds {type(text).__name__} "
            f"values, not strings. Name the text's {place} with "
            "--text-field (text_field=...).")
    return text if text.strip() else None


def _missing_column(path, field, columns):
    return CorpusError(
        f"{path} has no {field!r} column (it has: "
        f"{', '.join(columns[:8]) or 'none'}). Name the text's column "
        "with --text-field (text_field=...).")


def _parquet_rows(path, field):
    parquet = _import_pyarrow_parquet(path)
    try:
        table = parquet.ParquetFile(path)
    except Exception as error:  # noqa: BLE001 - pyarrow's ArrowInvalid, ...
        raise CorpusError(
            f"{path} cannot be read as Parquet ({str(error).splitlines()[0]}"
            "). Check the file, or leave it out.") from None
    columns = table.schema_arrow.names
    if field not in columns:
        raise _missing_column(path, field, columns)
    number = 0
    for batch in table.iter_batches(batch_size=BATCH_ROWS, columns=[field]):
        for text in batch.column(0).to_pylist():
            number += 1
            yield number, text


def _saved_rows(path, field):
    datasets = _import_datasets(path)
    dataset = datasets.load_from_disk(str(path))
    if field not in dataset.column_names:
        raise _missing_column(path, field, dataset.column_names)
    yield from _numbered(dataset.select_columns([field]), field)


def _streamed_rows(path, field):
    datasets = _import_datasets(path)
    try:
        dataset = datasets.load_dataset(str(path), split="train",
                                        streaming=True)
    except (ValueError, FileNotFoundError) as error:
        raise CorpusError(
            f"{path} cannot be read as a dataset repository "
            f"({str(error).splitlines()[0]}). Check its README.md's "
            "configs, or give its data files themselves.") from None
    columns = dataset.column_names
    if columns is not None and field not in columns:
        raise _missing_column(path, field, columns)
    yield from _numbered(dataset, field)


def _numbered(dataset, field):
    number = 0
    for batch in dataset.iter(batch_size=BATCH_ROWS):
        if field not in batch:
            raise _missing_column(dataset, field, sorted(batch))
        for text in batch[field]:
            number += 1
            yield number, text


def _import_pyarrow_parquet(path):
    try:
        import pyarrow
        import pyarrow.parquet
    except ImportError:
        raise CorpusError(
            f"{path} is a Parquet file, which needs pyarrow: `pip install "
            "'pyarrow>=14.0.1'` (or `pip install 'kzoo[corpus]'`).") \
            from None
    if _release(pyarrow.__version__) < PYARROW_FLOOR:
        raise CorpusError(
            f"{path}: pyarrow {pyarrow.__version__} can run code a Parquet "
            "file names (CVE-2023-47248); upgrade it: `pip install "
            "'pyarrow>=14.0.1'`.")
    return pyarrow.parquet


def _import_datasets(path):
    try:
        import datasets
    except ImportError:
        raise CorpusError(
            f"{path} is a Hugging Face dataset, which needs the datasets "
            "library: `pip install 'datasets>=5.2.0'` (or `pip install "
            "'kzoo[corpus]'`).") from None
    return datasets


def _release(version):
    """`"14.0.1"` -> `(14, 0, 1)` (a suffix such as `.dev0` ignored)."""
    numbers = []
    for part in version.split(".")[:3]:
        digits = "".join(c for c in part if c.isdigit()) or "0"
        numbers.append(int(digits))
    return tuple(numbers + [0] * (3 - len(numbers)))
