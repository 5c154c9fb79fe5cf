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

import hashlib
import os
import shutil
import time
from pathlib import Path

import numpy as np

from kzoo.utils.files import read_json, write_json

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


class Shard:
    """One shard, memory-mapped: `tokens`, `sentence_starts`,
    `document_starts` are read-only arrays backed by the files."""

    def __init__(self, folder, record):
        self.folder = Path(folder)
        self.record = record
        self.name = record["name"]
        try:
            self.tokens = np.load(self.folder / "tokens.npy", mmap_mode="r")
            self.sentence_starts = np.load(self.folder / "sentences.npy",
                                           mmap_mode="r")
            self.document_starts = np.load(self.folder / "documents.npy",
                                           mmap_mode="r")
        except (OSError, ValueError) as error:
            raise CorpusError(
                f"Shard {self.folder} cannot be read ({error}). Prepare the "
                "corpus again (`kzoo prepare-corpus`).") from None
        if (self.tokens.size != record["tokens"]
                or self.sentence_starts.size != record["sentences"] + 1
                or self.document_starts.size != record["documents"] + 1):
            raise CorpusError(
                f"Shard {self.folder} does not hold what the manifest says "
                f"({record['documents']} documents, {record['tokens']} "
                "tokens): it was changed after preparation. Prepare the "
                "corpus again.")

    @property
    def num_documents(self):
        return self.document_starts.size - 1

    def sentence_lengths(self):
        return np.diff(self.sentence_starts)

    def document_sentence_range(self, index):
        """`(first, end)`: the sentences of document `index`."""
        return (int(self.document_starts[index]),
                int(self.document_starts[index + 1]))

    def sentence(self, index):
        """Sentence `index`'s ids (a read-only view into the file)."""
        return self.tokens[self.sentence_starts[index]:
                           self.sentence_starts[index + 1]]

    def document(self, index):
        """Document `index`: a list of its sentences' ids."""
        first, end = self.document_sentence_range(index)
        return [self.sentence(i) for i in range(first, end)]

    def document_tokens(self, index):
        """Document `index`'s ids end to end (one view, no copy)."""
        first, end = self.document_sentence_range(index)
        return self.tokens[self.sentence_starts[first]:
                           self.sentence_starts[end]]

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


class Corpus:
    """A prepared corpus, read through memory maps.

    Documents are numbered across shards in manifest order:
    `corpus.document(i)` is a list of sentence id arrays. `split` picks
    the training shards (`"train"`, the manifest's `shards`) or the
    held-out ones (`"validation"`, its `validation_shards`: the documents
    `kzoo prepare-corpus --validation-documents N` set aside).

    Example:
    ```python
    corpus = kzoo.corpus.Corpus("austen_corpus")
    print(corpus.num_documents, corpus.num_tokens)
    first_sentence = corpus.document(0)[0]
    ```
    """

    def __init__(self, folder, split="train"):
        if split not in SPLITS:
            raise ValueError(
                f"Corpus: split must be one of {sorted(SPLITS)}; got "
                f"{split!r}.")
        self.folder = Path(folder)
        self.split = split
        self.manifest = read_manifest(self.folder)
        records = self.manifest.get(SPLITS[split]) or []
        if split == "validation" and not records:
            raise CorpusError(
                f"{self.folder} holds no validation documents. Prepare it "
                "again with `kzoo prepare-corpus ... "
                "--validation-documents N`.")
        self.shards = [Shard(self.folder / SHARDS_FOLDER / record["name"],
                             record)
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
