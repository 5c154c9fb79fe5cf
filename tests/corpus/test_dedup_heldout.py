"""Exact duplicates removed at preparation (kzoo/corpus/dedup.py) and the
held-out split drawn by a hash of each document (kzoo/corpus/heldout.py):
the first copy kept in order and the count reported; the same documents
held out whatever their position in the files; no held-out document
also trained on. Backend-independent: once."""

import pytest

from kzoo.corpus import Corpus, prepare_corpus
from kzoo.corpus.report import describe
from kzoo.core.tokenizer import Tokenizer

pytestmark = pytest.mark.once

DOCUMENTS = [f"Document {word} begins here.\nIt has a second line {word}."
             for word in ("one", "two", "three", "four", "five", "six",
                          "seven", "eight", "nine", "ten", "eleven",
                          "twelve")]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer.from_preset("bert_tiny_en_uncased")


def write(path, documents):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return path


def as_lists(folder, split="train"):
    corpus = Corpus(folder, split=split)
    return [[s.tolist() for s in corpus.document(i)]
            for i in range(corpus.num_documents)]


def prepare(inputs, output, tokenizer, **kwargs):
    kwargs.setdefault("validation_documents", 0)
    return prepare_corpus(inputs, output, tokenizer, processes=1,
                          progress=False, **kwargs)


def test_exact_duplicates_are_removed_and_counted(tmp_path, tokenizer):
    # Copies: document 1 again, and document 3 in other case and spacing
    # (the uncased vocabulary reads it as the same ids), in another file.
    write(tmp_path / "in" / "a.txt", DOCUMENTS[:4] + [DOCUMENTS[1]])
    write(tmp_path / "in" / "b.txt", [
        "  " + DOCUMENTS[3].upper().replace(" ", "   "), DOCUMENTS[4]])
    kept = prepare([tmp_path / "in"], tmp_path / "kept", tokenizer)
    assert kept["documents"] == 7 and kept["duplicate_documents"] == 0
    summary = prepare([tmp_path / "in"], tmp_path / "out", tokenizer,
                      deduplicate=True)
    everything = as_lists(tmp_path / "kept")
    # The first copies, in corpus order.
    assert as_lists(tmp_path / "out") == everything[:4] + [everything[6]]
    assert summary["documents"] == 5
    assert summary["duplicate_documents"] == 2
    removed = Corpus(tmp_path / "out").manifest["duplicates"]
    assert removed["documents"] == 2
    assert removed["tokens"] == sum(len(s) for d in everything[4:6]
                                    for s in d)
    assert "2 duplicate documents removed" in describe(dict(
        summary, seconds=1.0, mb_per_second=1.0))


def test_the_held_out_documents_do_not_depend_on_their_position(
        tmp_path, tokenizer):
    """The same documents in reverse order (and cut into other files)
    give the same held-out documents, not the last 3 of the files."""
    write(tmp_path / "forward" / "a.txt", DOCUMENTS)
    backward = DOCUMENTS[::-1]
    write(tmp_path / "backward" / "a.txt", backward[:5])
    write(tmp_path / "backward" / "b.txt", backward[5:])
    for name in ("forward", "backward"):
        summary = prepare([tmp_path / name], tmp_path / f"{name}_out",
                          tokenizer, validation_documents=3,
                          shard_tokens=40)
        assert summary["validation_documents"] == 3
    held = [as_lists(tmp_path / f"{name}_out", "validation")
            for name in ("forward", "backward")]
    assert sorted(held[0]) == sorted(held[1])
    prepare([tmp_path / "forward"], tmp_path / "all", tokenizer)
    everything = as_lists(tmp_path / "all")
    assert sorted(held[0]) != sorted(everything[-3:])
    # Training keeps the rest, in corpus order.
    assert as_lists(tmp_path / "forward_out") == [
        d for d in everything if d not in held[0]]


def test_no_copy_of_a_held_out_document_is_trained_on(tmp_path, tokenizer):
    write(tmp_path / "a.txt", DOCUMENTS + DOCUMENTS[::-1])
    prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
            validation_documents=4, deduplicate=True)
    train = as_lists(tmp_path / "out")
    held = as_lists(tmp_path / "out", "validation")
    assert len(train) == 8 and len(held) == 4
    assert not any(document in train for document in held)
