"""The on-disk form of a tokenized corpus: shards of token ids that keep
their documents' and sentences' boundaries, listed by a manifest.

Layout of a corpus folder:

    manifest.json                  what the corpus holds (see `Manifest`)
    tokenizer/                     the tokenizer the ids come from (a
                                   preset folder: tokenizer.json + assets)
    shards/NAME/tokens.npy         every sentence's ids, end to end
                                   (uint16 when the vocabulary fits, else
                                   uint32)
    shards/NAME/sentences.npy      int64, (sentences + 1,): where each
                                   sentence starts in tokens.npy
    shards/NAME/documents.npy      int64, (documents + 1,): where each
                                   document starts in sentences.npy

Why this format: NumPy `.npy` files read with `np.load(mmap_mode="r")`,
as nanoGPT's token bins and Megatron-LM's indexed datasets are read. Any
document is two slices away, with no parsing and no copy, in any order
(a resumed run starts at its position at once, a process reads only its
slice), and memory does not grow with the corpus: the operating system's
page cache holds what is hot. TFRecord would need the TensorFlow runtime
to read on JAX and torch and reads front to back only; ArrayRecord ships
Linux wheels only. `.npy` needs nothing beyond NumPy and states its own
dtype and shape.

A shard is written into a hidden temporary folder and renamed into place
once its three files are complete; the manifest, rewritten atomically,
lists only complete shards, with each tokens file's sha256. A folder under
`shards/` that the manifest does not list is not part of the corpus (an
interrupted preparation's leftover; the next preparation removes it).
"""

import errno
import hashlib
import os
import shutil
import time
from collections import OrderedDict
from pathlib import Path

import numpy as np

from kzoo.utils.files import read_json, write_json
from kzoo.utils.storage import is_url

FORMAT = "kzoo-corpus"
FORMAT_VERSION = 1
MANIFEST = "manifest.json"
TOKENIZER_FOLDER = "tokenizer"
SHARDS_FOLDER = "shards"


class CorpusError(ValueError):
    """A corpus folder that cannot be read, or does not fit its use."""


def token_dtype(vocabulary_size):
    """uint16 when every id fits (vocabularies up to 65,536), else uint32:
    half the disk and page cache for BERT's, RoBERTa's and T5's ids."""
    return np.uint16 if vocabulary_size <= 1 << 16 else np.uint32


def write_shard(shards_dir, name, documents, dtype):
    """Write one shard atomically and return its manifest record.

    Args:
        shards_dir: the corpus' `shards/` folder.
        name: the shard's folder name.
        documents: a list of documents, each a list of sentences, each a
            1-D array (or list) of token ids.
        dtype: the ids' dtype (`token_dtype`).

    Returns:
        `{"name", "documents", "sentences", "tokens", "sha256"}`.
    """
    sentences = [np.asarray(s, dtype=dtype) for doc in documents
                 for s in doc]
    tokens = np.concatenate(sentences) if sentences else \
        np.zeros((0,), dtype)
    sentence_starts = np.zeros((len(sentences) + 1,), np.int64)
    np.cumsum([len(s) for s in sentences], out=sentence_starts[1:])
    document_starts = np.zeros((len(documents) + 1,), np.int64)
    np.cumsum([len(doc) for doc in documents], out=document_starts[1:])
    return write_shard_arrays(shards_dir, name, tokens, sentence_starts,
                              document_starts)


def write_shard_arrays(shards_dir, name, tokens, sentence_starts,
                       document_starts):
    """`write_shard` from the three arrays as stored: `tokens` (in its
    dtype), `sentence_starts` (sentences + 1) and `document_starts`
    (documents + 1), both starting at 0. What a preparation writes: a
    shard's ids stay in a few flat arrays, never one object per sentence.
    """
    shards_dir = Path(shards_dir)
    shards_dir.mkdir(parents=True, exist_ok=True)
    tokens = np.ascontiguousarray(tokens)
    sentence_starts = np.asarray(sentence_starts, np.int64)
    document_starts = np.asarray(document_starts, np.int64)
    staging = shards_dir / f".{name}.partial-{os.getpid()}-{time.time_ns()}"
    staging.mkdir()
    try:
        np.save(staging / "tokens.npy", tokens)
        np.save(staging / "sentences.npy", sentence_starts)
        np.save(staging / "documents.npy", document_starts)
        final = shards_dir / name
        if final.exists():
            shutil.rmtree(final)
        os.replace(staging, final)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return {"name": name, "documents": int(document_starts.size - 1),
            "sentences": int(sentence_starts.size - 1),
            "tokens": int(tokens.size),
            "sha256": hashlib.sha256(tokens.tobytes()).hexdigest()}


# Shards a `Corpus` keeps open at most (three memory maps, three file
# descriptors each), whatever the soft limit on open files allows.
MAX_OPEN_SHARDS = 128


def open_files_limit():
    """This process' soft limit on open files, or None where there is
    none to read (Windows) or it is unlimited."""
    try:
        import resource
        soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    except (ImportError, OSError, ValueError):
        return None
    return None if soft == getattr(resource, "RLIM_INFINITY", -1) else soft


def default_open_shards():
    """How many shards to keep open: `MAX_OPEN_SHARDS`, or fewer when the
    open-files limit is low. A shard holds three descriptors, and views a
    stream still holds keep an evicted shard's maps alive a little
    longer: an eighth of the limit leaves the rest to the libraries."""
    soft = open_files_limit()
    if soft is None:
        return MAX_OPEN_SHARDS
    return max(2, min(MAX_OPEN_SHARDS, soft // 8))


class OpenShards:
    """The shards a corpus holds open, least recently used first: using
    one more than `limit` closes the oldest (its memory maps, and so its
    file descriptors, go once no view of them is left). 1 TB of text is
    ~15,000 shards: opened all at once they would need ~45,000
    descriptors, past the common limit of 1,024 (and near Linux's 65,530
    memory maps per process)."""

    def __init__(self, limit):
        if isinstance(limit, bool) or not isinstance(
                limit, (int, np.integer)) or limit < 1:
            raise ValueError(f"max_open_shards must be a positive integer; "
                             f"got {limit!r}.")
        self.limit = int(limit)
        self._open = OrderedDict()

    def __len__(self):
        return len(self._open)

    def used(self, shard):
        key = id(shard)
        if key in self._open:
            self._open.move_to_end(key)
            return
        self._open[key] = shard
        while len(self._open) > self.limit:
            _, oldest = self._open.popitem(last=False)
            oldest.close()


def _open_failure(folder, error, open_shards):
    """The one-line CorpusError for a shard that cannot be opened: the
    process' open-files limit (what it is and what to do), else the
    error itself."""
    if error.errno in (errno.EMFILE, errno.ENFILE):
        limit = open_files_limit()
        kept = open_shards.limit if open_shards is not None else None
        fewer = f" (now {kept})" if kept else ""
        return CorpusError(
            f"Cannot open shard {folder}: this process reached its limit of "
            f"{limit or 'its'} open files ({error.strerror}). Raise the "
            f"limit before the run (`ulimit -n {max(4096, 4 * (limit or 0))}"
            "`, or LimitNOFILE= for a service), or keep fewer shards open: "
            f"Corpus(..., max_open_shards=N){fewer}.")
    if error.errno == errno.ENOMEM:
        return CorpusError(
            f"Cannot memory-map shard {folder} ({error.strerror}): the "
            "process is out of memory maps (Linux: sysctl "
            "vm.max_map_count). Raise vm.max_map_count, or keep fewer "
            "shards open: Corpus(..., max_open_shards=N).")
    return CorpusError(
        f"Shard {folder} cannot be read ({error}). Prepare the corpus "
        "again (`kzoo prepare-corpus`).")


class Shard:
    """One shard, memory-mapped when first read: `tokens`,
    `sentence_starts`, `document_starts` are read-only arrays backed by
    the files. Its counts come from the manifest's record, so a corpus
    knows its documents without opening a shard. `open_shards` (an
    `OpenShards`) bounds how many shards hold their files open; a closed
    shard opens again when next read."""

    def __init__(self, folder, record, open_shards=None, fetch=None):
        self.folder = Path(folder)
        self.record = record
        self.name = record["name"]
        self._open_shards = open_shards
        # A remote corpus' shard: `fetch()` downloads its files into the
        # local cache (once) before they are mapped.
        self._fetch = fetch
        self._arrays = None

    @property
    def is_open(self):
        return self._arrays is not None

    def close(self):
        """Let the memory maps go (they close once no view is left)."""
        self._arrays = None

    def arrays(self):
        """`(tokens, sentence_starts, document_starts)`, opened if need be
        and checked against the manifest's record."""
        if self._arrays is None:
            self._arrays = self._load()
        if self._open_shards is not None:
            self._open_shards.used(self)
        return self._arrays

    def _load(self):
        record = self.record
        if self._fetch is not None:
            self._fetch()
        try:
            arrays = tuple(np.load(self.folder / name, mmap_mode="r")
                           for name in ("tokens.npy", "sentences.npy",
                                        "documents.npy"))
        except OSError as error:
            raise _open_failure(self.folder, error,
                                self._open_shards) from None
        except ValueError as error:
            raise CorpusError(
                f"Shard {self.folder} cannot be read ({error}). Prepare the "
                "corpus again (`kzoo prepare-corpus`).") from None
        tokens, sentence_starts, document_starts = arrays
        if (tokens.size != record["tokens"]
                or sentence_starts.size != record["sentences"] + 1
                or document_starts.size != record["documents"] + 1):
            raise CorpusError(
                f"Shard {self.folder} does not hold what the manifest says "
                f"({record['documents']} documents, {record['tokens']} "
                "tokens): it was changed after preparation. Prepare the "
                "corpus again.")
        return arrays

    @property
    def tokens(self):
        return self.arrays()[0]

    @property
    def sentence_starts(self):
        return self.arrays()[1]

    @property
    def document_starts(self):
        return self.arrays()[2]

    @property
    def num_documents(self):
        return int(self.record["documents"])

    def sentence_lengths(self):
        return np.diff(self.sentence_starts)

    def document_sentence_range(self, index):
        """`(first, end)`: the sentences of document `index`."""
        document_starts = self.arrays()[2]
        return (int(document_starts[index]),
                int(document_starts[index + 1]))

    def sentence(self, index):
        """Sentence `index`'s ids (a read-only view into the file): O(1),
        two reads of the index and a slice, however long its document."""
        tokens, sentence_starts, _ = self.arrays()
        return tokens[sentence_starts[index]:sentence_starts[index + 1]]

    def document(self, index):
        """Document `index`: a list of its sentences' ids."""
        first, end = self.document_sentence_range(index)
        return [self.sentence(i) for i in range(first, end)]

    def document_tokens(self, index):
        """Document `index`'s ids end to end (one view, no copy)."""
        first, end = self.document_sentence_range(index)
        tokens, sentence_starts, _ = self.arrays()
        return tokens[sentence_starts[first]:sentence_starts[end]]

    def verify(self):
        """Check the tokens file against the manifest's sha256 (reads the
        whole shard)."""
        digest = hashlib.sha256(np.ascontiguousarray(self.tokens).tobytes())
        if digest.hexdigest() != self.record["sha256"]:
            raise CorpusError(
                f"Shard {self.folder} is damaged: its sha256 differs from "
                "the manifest's. Prepare the corpus again.")


def read_manifest(folder):
    folder = Path(folder)
    path = folder / MANIFEST
    if not path.is_file():
        raise CorpusError(
            f"{folder} is not a prepared corpus (no {MANIFEST}). Make one "
            "with `kzoo prepare-corpus PRESET INPUTS... --output "
            f"{folder}`.")
    manifest = read_json(path)
    if manifest.get("format") != FORMAT:
        raise CorpusError(f"{path} is not a kzoo corpus manifest.")
    if manifest.get("format_version", 0) > FORMAT_VERSION:
        raise CorpusError(
            f"{path} was written by a newer kzoo (corpus format "
            f"{manifest['format_version']}; this kzoo reads up to "
            f"{FORMAT_VERSION}). Upgrade kzoo.")
    return manifest


def write_manifest(folder, manifest):
    manifest = dict(manifest, format=FORMAT, format_version=FORMAT_VERSION)
    write_json(Path(folder) / MANIFEST, manifest)


SPLITS = {"train": "shards", "validation": "validation_shards"}


def _remote_copy(url):
    """The committed corpus at `url` (`kzoo.utils.storage.CachedFolder`),
    its manifest and tokenizer fetched into the local cache."""
    from kzoo.presets import cache_dir
    from kzoo.utils.storage import CachedFolder
    remote = CachedFolder(
        url, cache_dir() / "storage", what="corpus",
        fix="Prepare it with `kzoo prepare-corpus PRESET INPUTS... "
            f"--output {url}`.")
    remote.fetch(MANIFEST)
    remote.fetch_under(TOKENIZER_FOLDER)
    return remote


def _shard_fetch(remote, name):
    if remote is None:
        return None
    return lambda: remote.fetch_under(f"{SHARDS_FOLDER}/{name}")


class Corpus:
    """A prepared corpus, read through memory maps.

    Documents are numbered across shards in manifest order:
    `corpus.document(i)` is a list of sentence id arrays. `split` picks
    the training shards (`"train"`, the manifest's `shards`) or the
    held-out ones (`"validation"`, its `validation_shards`: the documents
    `kzoo prepare-corpus --validation-documents N` set aside).

    Shards are memory-mapped when first read, at most `max_open_shards`
    at a time (default: 128, or an eighth of the open-files limit when
    that is lower), the least recently read closed first: start-up reads
    the manifest alone, whatever the number of shards.

    `folder` may be a URL (`s3://bucket/corpus`, `gs://...`, `hf://...`;
    `kzoo/utils/storage.py`) of a corpus `prepare_corpus` committed
    there. Its manifest and tokenizer are downloaded at once, and each
    shard's three files when the shard is first read, into
    `$KZOO_CACHE/storage/` (a folder per URL and commit); `folder` is
    then that local copy. Why whole shards and not range reads: the
    example order jumps between documents of every shard (a seeded
    permutation), so reading by range would cost one request (tens of
    milliseconds) per document, where a downloaded shard is memory-mapped
    and read at memory speed for the rest of the run, by every process of
    the machine; a shard is ~33 MB at the default 16.7 M tokens.

    Example:
    ```python
    corpus = kzoo.corpus.Corpus("austen_corpus")
    print(corpus.num_documents, corpus.num_tokens)
    first_sentence = corpus.document(0)[0]
    ```
    """

    def __init__(self, folder, split="train", max_open_shards=None):
        if split not in SPLITS:
            raise ValueError(
                f"Corpus: split must be one of {sorted(SPLITS)}; got "
                f"{split!r}.")
        self.location = str(folder)  # as given: a folder or a URL
        remote = _remote_copy(folder) if is_url(folder) else None
        self.folder = remote.local if remote else Path(folder)
        self.split = split
        self.manifest = read_manifest(self.folder)
        records = self.manifest.get(SPLITS[split]) or []
        if split == "validation" and not records:
            raise CorpusError(
                f"{self.folder} holds no validation documents. Prepare it "
                "again with `kzoo prepare-corpus ... "
                "--validation-documents N`.")
        # Nothing is opened here: a shard maps its files when first read,
        # and at most `max_open_shards` stay open (see `OpenShards`).
        self.open_shards = OpenShards(max_open_shards or
                                      default_open_shards())
        self.shards = [Shard(self.folder / SHARDS_FOLDER / record["name"],
                             record, self.open_shards,
                             _shard_fetch(remote, record["name"]))
                       for record in records]
        counts = [shard.num_documents for shard in self.shards]
        self.document_offsets = np.zeros((len(counts) + 1,), np.int64)
        np.cumsum(counts, out=self.document_offsets[1:])

    @property
    def tokenizer_folder(self):
        return self.folder / TOKENIZER_FOLDER

    @property
    def tokenizer_hash(self):
        return self.manifest["tokenizer"]["sha256"]

    @property
    def num_documents(self):
        return int(self.document_offsets[-1])

    @property
    def num_tokens(self):
        return sum(shard.record["tokens"] for shard in self.shards)

    def locate(self, index):
        """`(shard, index inside it)` of document `index`."""
        if not 0 <= index < self.num_documents:
            raise IndexError(f"document {index} of {self.num_documents}")
        shard = int(np.searchsorted(self.document_offsets, index,
                                    side="right")) - 1
        return self.shards[shard], index - int(self.document_offsets[shard])

    def document(self, index):
        shard, local = self.locate(index)
        return shard.document(local)

    def document_tokens(self, index):
        shard, local = self.locate(index)
        return shard.document_tokens(local)

    def check_tokenizer(self, tokenizer_hash, what):
        """Refuse to feed `what` (a model's name) ids from another
        tokenizer."""
        if tokenizer_hash != self.tokenizer_hash:
            raise CorpusError(
                f"{self.folder} was tokenized with another tokenizer than "
                f"{what}'s (tokenizer hashes {self.tokenizer_hash[:12]} and "
                f"{tokenizer_hash[:12]} differ). Prepare the corpus again "
                f"with {what}'s tokenizer.")
