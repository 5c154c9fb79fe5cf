"""Table inputs of `kzoo prepare-corpus` (kzoo/corpus/readers.py): a
Parquet file, a folder saved by `datasets`' `save_to_disk` and a local
dataset repository read by `load_dataset(..., streaming=True)` give the
ids the same documents give as a `.jsonl` file (a row a document, null
and empty rows skipped); a re-run on unchanged tables does nothing;
bad tables are refused in one line naming the input and what to do.
Backend-independent: once."""

import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from kzoo.corpus import Corpus, CorpusError, prepare_corpus
from kzoo.corpus.sources import find_sources
from kzoo.core.tokenizer import Tokenizer

pytestmark = pytest.mark.once

DOCUMENTS = [
    "It rained all day. We stayed in.\nThe fire was low.",
    "A new document! Is it? Yes, it is.",
    "One sentence only",
    "Mr. Knightley came. He sat down; he spoke at last.",
]
# As stored: a null and a blank row between them, skipped.
ROWS = DOCUMENTS[:2] + [None, "  "] + DOCUMENTS[2:]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer.from_preset("bert_tiny_en_uncased")


def prepare(inputs, output, tokenizer, **kwargs):
    return prepare_corpus(inputs, output, tokenizer, processes=1,
                          progress=False, validation_documents=0, **kwargs)


def as_lists(folder):
    corpus = Corpus(folder)
    return [[s.tolist() for s in corpus.document(i)]
            for i in range(corpus.num_documents)]


@pytest.fixture(scope="module")
def reference(tmp_path_factory, tokenizer):
    """The documents prepared from a .jsonl file."""
    root = tmp_path_factory.mktemp("tables")
    (root / "docs.jsonl").write_text("\n".join(
        json.dumps({"body": d}) for d in DOCUMENTS) + "\n", encoding="utf-8")
    prepare([root / "docs.jsonl"], root / "jsonl", tokenizer,
            text_field="body")
    lists = as_lists(root / "jsonl")
    assert len(lists) == 4
    return root, lists


def test_a_parquet_file_gives_the_jsonl_ids(reference, tokenizer, capsys):
    root, want = reference
    table = pa.table({"id": list(range(len(ROWS))), "body": ROWS})
    # Two row groups: rows are read a batch at a time, across groups.
    pq.write_table(table, root / "docs.parquet", row_group_size=3)
    summary = prepare([root / "docs.parquet"], root / "parquet", tokenizer,
                      text_field="body")
    assert as_lists(root / "parquet") == want
    assert summary["documents"] == 4
    again = prepare([root / "docs.parquet"], root / "parquet", tokenizer,
                    text_field="body")
    assert again["up_to_date"]
    # A folder's .parquet files are found beside its text files.
    folder = root / "mixed"
    folder.mkdir()
    pq.write_table(table, folder / "b.parquet")
    (folder / "a.txt").write_text(DOCUMENTS[0], encoding="utf-8")
    assert find_sources([folder]) == [(folder / "a.txt").resolve(),
                                      (folder / "b.parquet").resolve()]


def test_a_saved_dataset_gives_the_jsonl_ids(reference, tokenizer):
    import datasets
    root, want = reference
    datasets.Dataset.from_dict({"body": ROWS}).save_to_disk(
        str(root / "saved"))
    prepare([root / "saved"], root / "from_saved", tokenizer,
            text_field="body")
    assert as_lists(root / "from_saved") == want
    # Splits saved together (a DatasetDict): its train split is read, not
    # the validation rows beside it; another split by its folder.
    datasets.DatasetDict({
        "train": datasets.Dataset.from_dict({"body": ROWS}),
        "validation": datasets.Dataset.from_dict(
            {"body": ["Held out, never trained on."]})}).save_to_disk(
        str(root / "splits"))
    prepare([root / "splits"], root / "from_splits", tokenizer,
            text_field="body")
    assert as_lists(root / "from_splits") == want
    # Splits without a train split: the error names one to give.
    datasets.DatasetDict({"test": datasets.Dataset.from_dict(
        {"body": ROWS})}).save_to_disk(str(root / "test_only"))
    with pytest.raises(CorpusError) as error:
        prepare([root / "test_only"], root / "from_test", tokenizer)
    assert "\n" not in str(error.value)
    assert str(root / "test_only" / "test") in str(error.value)


def test_a_local_dataset_repository_is_streamed(reference, tokenizer,
                                                monkeypatch):
    import datasets
    root, want = reference
    repository = root / "repository"
    (repository / "data").mkdir(parents=True)
    # A Hub dataset card names the train split's files.
    (repository / "README.md").write_text(
        "---\nconfigs:\n- config_name: default\n  data_files:\n"
        "  - split: train\n    path: data/train-*.parquet\n---\n# Novels\n")
    pq.write_table(pa.table({"body": ROWS[:3]}),
                   repository / "data" / "train-0.parquet")
    pq.write_table(pa.table({"body": ROWS[3:]}),
                   repository / "data" / "train-1.parquet")
    pq.write_table(pa.table({"body": ["not in the train split"]}),
                   repository / "data" / "test-0.parquet")
    streamed = []
    load = datasets.load_dataset

    def load_dataset(*args, **kwargs):
        streamed.append(kwargs.get("streaming"))
        return load(*args, **kwargs)

    monkeypatch.setattr(datasets, "load_dataset", load_dataset)
    prepare([repository], root / "from_repository", tokenizer,
            text_field="body")
    assert streamed == [True]
    assert as_lists(root / "from_repository") == want


def test_bad_tables_are_refused_naming_them(reference, tokenizer,
                                            monkeypatch):
    root, _ = reference
    pq.write_table(pa.table({"title": ["a"], "body": [3]}),
                   root / "bad.parquet")
    cases = [({"text_field": "text"}, "has no 'text' column (it has: "
              "title, body). Name the text's column with --text-field"),
             ({"text_field": "body"}, "row 1: the 'body' column holds int "
              "values, not strings")]
    for options, message in cases:
        with pytest.raises(CorpusError) as error:
            prepare([root / "bad.parquet"], root / "bad_out", tokenizer,
                    **options)
        assert "\n" not in str(error.value)
        assert str(error.value).startswith(str(root / "bad.parquet"))
        assert message in str(error.value)
    (root / "broken.parquet").write_bytes(b"PAR1 not really")
    with pytest.raises(CorpusError, match="cannot be read as Parquet"):
        prepare([root / "broken.parquet"], root / "bad_out", tokenizer)
    # Without pyarrow: what to install.
    monkeypatch.setitem(sys.modules, "pyarrow", None)
    with pytest.raises(CorpusError, match=r"needs pyarrow: `pip install "
                       r"'pyarrow>=14.0.1'`"):
        prepare([root / "bad.parquet"], root / "bad_out", tokenizer)
