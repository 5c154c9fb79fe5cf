"""`kzoo.corpus.prepare_corpus` and `kzoo prepare-corpus`: text files in,
shards out whose ids are the tokenizer's for each sentence as running
text, with document and sentence boundaries kept; the same manifest for
any number of processes and for parts merged; re-runs that do nothing;
interrupted runs that leave no corpus behind; one-line errors naming the
file for bad input."""

import gzip
import json
import os
import subprocess
import sys
import textwrap

import pytest

from kzoo.corpus import Corpus, CorpusError, merge_parts, prepare_corpus
from kzoo.corpus import prepare as prepare_module
from kzoo.corpus import shard_writer
from kzoo.core.tokenizer import Tokenizer
from kzoo.preprocessing.packing import running_text_sentences
from kzoo.preprocessing.sentence_pairs import split_sentences

pytestmark = pytest.mark.once

BERT = "bert_tiny_en_uncased"

DOCUMENTS = [
    "It rained all day.\nWe stayed in. The fire was low.",
    "A new document!\nIs it? Yes, it is.",
    "One sentence only",
    "Mr. Knightley came. He sat down; he spoke at last.",
]


@pytest.fixture(scope="module")
def tokenizer():
    return Tokenizer.from_preset(BERT)


def expected(tokenizer, document, text="lines"):
    """A document's sentences' ids, tokenized as running text: each line
    a sentence (`text="lines"`, BERT's input), or each blank-line
    paragraph split into sentences (`"paragraphs"`)."""
    if text == "lines":
        sentences = document.split("\n")
    else:
        sentences = [s for paragraph in document.split("\n\n")
                     for s in split_sentences(paragraph, min_words=1)]
    sentences = running_text_sentences(sentences)
    return [list(ids) for ids in tokenizer.tokenize(sentences)]


def as_lists(corpus):
    return [[s.tolist() for s in corpus.document(i)]
            for i in range(corpus.num_documents)]


def write_txt(path, documents):
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("\n\n".join(documents) + "\n", encoding="utf-8")
    return path


def prepare(inputs, output, tokenizer, **kwargs):
    kwargs.setdefault("processes", 1)
    kwargs.setdefault("progress", False)
    kwargs.setdefault("validation_documents", 0)
    return prepare_corpus(inputs, output, tokenizer, **kwargs)


def test_blank_lines_round_trip(tmp_path, tokenizer):
    write_txt(tmp_path / "in" / "a.txt", DOCUMENTS[:2])
    write_txt(tmp_path / "in" / "sub" / "b.txt", DOCUMENTS[2:])
    summary = prepare([tmp_path / "in"], tmp_path / "out", tokenizer,
                      shard_tokens=10)
    corpus = Corpus(tmp_path / "out")
    assert as_lists(corpus) == [expected(tokenizer, d) for d in DOCUMENTS]
    assert summary["documents"] == corpus.num_documents == 4
    assert summary["tokens"] == corpus.num_tokens
    # Shards end at the first document boundary at or past 10 tokens
    # ("One sentence only" has 3); each file is a unit of its own here.
    assert [shard.num_documents for shard in corpus.shards] == [1, 1, 2]
    corpus.check_tokenizer(prepare_module.tokenizer_hash(tokenizer), BERT)
    # The saved tokenizer is the one the ids come from.
    saved = Tokenizer.from_preset(str(corpus.tokenizer_folder))
    assert prepare_module.tokenizer_hash(saved) == corpus.tokenizer_hash


def test_files_mode_makes_each_file_one_document(tmp_path, tokenizer):
    write_txt(tmp_path / "in" / "a.txt", DOCUMENTS[:2])
    write_txt(tmp_path / "in" / "b.txt", DOCUMENTS[2:])
    prepare([tmp_path / "in"], tmp_path / "out", tokenizer,
            documents="files")
    corpus = Corpus(tmp_path / "out")
    # A book's paragraphs (between blank lines) are split into sentences:
    # "One sentence only" has no full stop but ends its paragraph.
    assert as_lists(corpus) == [
        expected(tokenizer, "\n\n".join(DOCUMENTS[:2]), "paragraphs"),
        expected(tokenizer, "\n\n".join(DOCUMENTS[2:]), "paragraphs")]


def test_byte_level_bpe_sentences_keep_their_leading_space(tmp_path):
    gpt2 = Tokenizer.from_preset("gpt2_base_en")
    write_txt(tmp_path / "a.txt", DOCUMENTS)
    prepare([tmp_path / "a.txt"], tmp_path / "out", gpt2)
    corpus = Corpus(tmp_path / "out")
    for index, document in enumerate(DOCUMENTS):
        whole = gpt2.tokenize([" ".join(document.split())])[0]
        assert corpus.document_tokens(index).tolist() == list(whole)
        assert len(corpus.document(index)) == len(document.split("\n"))


def test_gz_and_jsonl_give_the_txt_ids(tmp_path, tokenizer):
    write_txt(tmp_path / "txt" / "a.txt", DOCUMENTS)
    with gzip.open(tmp_path / "gz.txt.gz", "wt", encoding="utf-8") as f:
        f.write("\n\n".join(DOCUMENTS))
    lines = [json.dumps({"body": d, "id": i}) for i, d in
             enumerate(DOCUMENTS)]
    (tmp_path / "j.jsonl").write_text("\n".join(lines[:2]) + "\n\n",
                                      encoding="utf-8")
    with gzip.open(tmp_path / "j2.jsonl.gz", "wt", encoding="utf-8") as f:
        f.write("\n".join(lines[2:]))
    prepare([tmp_path / "txt"], tmp_path / "a", tokenizer)
    prepare([tmp_path / "gz.txt.gz"], tmp_path / "b", tokenizer)
    prepare([str(tmp_path / "j*.jsonl*")], tmp_path / "c", tokenizer,
            text_field="body", text="lines")
    lists = [as_lists(Corpus(tmp_path / name)) for name in "abc"]
    assert lists[0] == lists[1] == lists[2]
    assert len(lists[0]) == 4


def test_same_manifest_for_one_and_two_processes(tmp_path, tokenizer):
    for index in range(3):
        write_txt(tmp_path / "in" / f"{index}.txt", DOCUMENTS)
    for processes in (1, 2):
        prepare([tmp_path / "in"], tmp_path / f"out{processes}",
                BERT, shard_tokens=30, processes=processes,
                validation_documents=2)
    manifests = [json.loads((tmp_path / f"out{n}" / "manifest.json")
                            .read_text()) for n in (1, 2)]
    assert manifests[0] == manifests[1]
    records = manifests[0]["shards"] + manifests[0]["validation_shards"]
    # Three units of work (one per file), so two processes did share them.
    assert {r["name"].split("-u")[1][:5] for r in records} == {
        "00000", "00001", "00002"}


def test_validation_holds_out_documents_drawn_by_hash(tmp_path, tokenizer):
    write_txt(tmp_path / "a.txt", DOCUMENTS + DOCUMENTS)
    prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
            shard_tokens=1000, validation_documents=3)
    train = Corpus(tmp_path / "out")
    validation = Corpus(tmp_path / "out", split="validation")
    everything = [expected(tokenizer, d) for d in DOCUMENTS + DOCUMENTS]
    # Which 3: tests/corpus/test_dedup_heldout.py; the rest train, in
    # order (of two copies, the earlier is held out).
    held = as_lists(validation)
    rest = list(everything)
    for document in held:
        rest.remove(document)
    assert len(held) == 3 and as_lists(train) == rest
    # The boundary shard was written again as two; the original is gone.
    names = sorted(p.name for p in (tmp_path / "out" / "shards").iterdir())
    assert names == sorted(s.name for s in train.shards + validation.shards)
    assert names == ["part-0000-of-0001-u00000-00000-train",
                     "part-0000-of-0001-u00000-00000-validation"]
    prepare([tmp_path / "a.txt"], tmp_path / "none", tokenizer)
    with pytest.raises(CorpusError, match="no validation documents"):
        Corpus(tmp_path / "none", split="validation")
    with pytest.raises(CorpusError, match="every one of"):
        prepare([tmp_path / "a.txt"], tmp_path / "all", tokenizer,
                validation_documents=8)


def test_rerun_is_a_no_op_and_other_options_are_refused(
        tmp_path, tokenizer, capsys):
    write_txt(tmp_path / "a.txt", DOCUMENTS)
    prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer)
    manifest = tmp_path / "out" / "manifest.json"
    before = manifest.stat().st_mtime_ns
    summary = prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
                      progress=True)
    assert summary["up_to_date"]
    assert "up to date" in capsys.readouterr().err
    assert manifest.stat().st_mtime_ns == before
    with pytest.raises(CorpusError, match=r"other options \(shard_tokens"):
        prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
                shard_tokens=5)
    gpt2 = Tokenizer.from_preset("gpt2_base_en")
    with pytest.raises(CorpusError, match="another tokenizer.*--overwrite"):
        prepare([tmp_path / "a.txt"], tmp_path / "out", gpt2)
    prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
            shard_tokens=5, overwrite=True)
    assert len(Corpus(tmp_path / "out").shards) == 3
    # Changed inputs are prepared again without --overwrite.
    write_txt(tmp_path / "a.txt", DOCUMENTS[:2])
    assert not prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
                       shard_tokens=5)["up_to_date"]
    assert Corpus(tmp_path / "out").num_documents == 2


def test_interrupted_preparation_leaves_no_corpus(tmp_path, tokenizer,
                                                  monkeypatch):
    write_txt(tmp_path / "a.txt", DOCUMENTS)
    real = shard_writer.write_shard_arrays
    calls = []

    def crash_after_one(*args):
        if calls:
            raise KeyboardInterrupt
        calls.append(args[1])
        return real(*args)

    monkeypatch.setattr(shard_writer, "write_shard_arrays",
                        crash_after_one)
    with pytest.raises(KeyboardInterrupt):
        prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
                shard_tokens=10)
    assert (tmp_path / "out" / "shards" / calls[0]).is_dir()
    with pytest.raises(CorpusError, match="not a prepared corpus"):
        Corpus(tmp_path / "out")
    monkeypatch.setattr(shard_writer, "write_shard_arrays", real)
    prepare([tmp_path / "a.txt"], tmp_path / "out", tokenizer,
            shard_tokens=10)
    corpus = Corpus(tmp_path / "out")
    assert as_lists(corpus) == [expected(tokenizer, d) for d in DOCUMENTS]
    listed = {shard.name for shard in corpus.shards}
    assert {p.name for p in (tmp_path / "out" / "shards").iterdir()} \
        == listed


def test_parts_merged_equal_a_single_run(tmp_path, tokenizer):
    for index in range(5):
        write_txt(tmp_path / "in" / f"{index}.txt",
                  DOCUMENTS[index % 4:] + DOCUMENTS[:index % 4])
    options = dict(shard_tokens=40, validation_documents=3)
    prepare([tmp_path / "in"], tmp_path / "single", tokenizer, **options)
    summaries = [prepare([tmp_path / "in"], tmp_path / "parts", tokenizer,
                         part=f"{index}/3", **options)
                 for index in (2, 0)]
    assert not any(summary["merged"] for summary in summaries)
    assert not (tmp_path / "parts" / "manifest.json").exists()
    with pytest.raises(CorpusError, match=r"lacks part\(s\) 1 of 3"):
        merge_parts(tmp_path / "parts", progress=False)
    assert prepare([tmp_path / "in"], tmp_path / "parts", tokenizer,
                   part=(1, 3), **options)["merged"]
    single, parts = Corpus(tmp_path / "single"), Corpus(tmp_path / "parts")
    assert as_lists(single) == as_lists(parts)
    assert as_lists(Corpus(tmp_path / "single", split="validation")) == \
        as_lists(Corpus(tmp_path / "parts", split="validation"))
    for key in ("sources", "options", "tokenizer", "documents", "tokens"):
        assert single.manifest[key] == parts.manifest[key]
    assert merge_parts(tmp_path / "parts", progress=False) == \
        parts.manifest
    # A single run over the merged corpus finds it up to date.
    assert prepare([tmp_path / "in"], tmp_path / "parts", tokenizer,
                   **options)["up_to_date"]


def bad(tmp_path, tokenizer, inputs, match, **kwargs):
    with pytest.raises(CorpusError, match=match):
        prepare(inputs, tmp_path / "out", tokenizer, **kwargs)


def test_bad_inputs_are_named_with_what_to_do(tmp_path, tokenizer):
    bad(tmp_path, tokenizer, [tmp_path / "missing"],
        "missing does not exist")
    (tmp_path / "empty_folder").mkdir()
    (tmp_path / "empty_folder" / "notes.csv").write_text("a,b\n")
    bad(tmp_path, tokenizer, [tmp_path / "empty_folder"],
        "empty_folder holds no .txt")
    bad(tmp_path, tokenizer, [str(tmp_path / "nothing*.txt")],
        "matches no")
    bad(tmp_path, tokenizer, [tmp_path / "empty_folder" / "notes.csv"],
        "not a .txt or .jsonl")
    (tmp_path / "blank.txt").write_text("\n \n")
    bad(tmp_path, tokenizer, [tmp_path / "blank.txt"], "hold no text")
    (tmp_path / "binary.txt").write_bytes(b"PK\x03\x04\x00\x00" * 10)
    bad(tmp_path, tokenizer, [tmp_path / "binary.txt"],
        "binary.txt is a binary file")
    (tmp_path / "latin.txt").write_bytes(b"fine\ncaf\xe9 au lait\n")
    bad(tmp_path, tokenizer, [tmp_path / "latin.txt"],
        r"latin.txt, line 2: not UTF-8 .*Convert")
    (tmp_path / "bad.jsonl").write_text('{"text": "a"}\n{"text": \n')
    bad(tmp_path, tokenizer, [tmp_path / "bad.jsonl"],
        "bad.jsonl, line 2: not JSON")
    (tmp_path / "field.jsonl").write_text('{"body": "a"}\n')
    bad(tmp_path, tokenizer, [tmp_path / "field.jsonl"],
        r"line 1: no 'text' field \(it has: body\).*--text-field")
    (tmp_path / "number.jsonl").write_text('{"text": null}\n{"text": 3}\n')
    bad(tmp_path, tokenizer, [tmp_path / "number.jsonl"],
        r"line 2: the 'text' field holds int values, not strings.*"
        "--text-field")
    (tmp_path / "fake.txt.gz").write_text("not gzip")
    bad(tmp_path, tokenizer, [tmp_path / "fake.txt.gz"], "not gzip data")
    write_txt(tmp_path / "good.txt", DOCUMENTS)
    (tmp_path / "project").mkdir()
    (tmp_path / "project" / "main.py").write_text("print(1)\n")
    with pytest.raises(CorpusError, match="holds other files .*main.py"):
        prepare([tmp_path / "good.txt"], tmp_path / "project", tokenizer)
    with pytest.raises(CorpusError, match="Cannot write the corpus"):
        prepare([tmp_path / "good.txt"], tmp_path / "good.txt" / "out",
                tokenizer)
    with pytest.raises(CorpusError, match="part must be I/N"):
        prepare([tmp_path / "good.txt"], tmp_path / "out", tokenizer,
                part="3")
    with pytest.raises(CorpusError, match="I counts from 0"):
        prepare([tmp_path / "good.txt"], tmp_path / "out", tokenizer,
                part="3/3")


def test_an_empty_file_is_skipped_with_a_warning(tmp_path, tokenizer):
    write_txt(tmp_path / "in" / "a.txt", DOCUMENTS)
    (tmp_path / "in" / "b.txt").write_text("")
    with pytest.warns(UserWarning, match="b.txt holds no text"):
        prepare([tmp_path / "in"], tmp_path / "out", tokenizer)
    assert Corpus(tmp_path / "out").num_documents == 4


def test_the_command_end_to_end(tmp_path, capsys):
    from kzoo import cli
    write_txt(tmp_path / "in" / "a.txt", DOCUMENTS)
    argv = ["prepare-corpus", BERT, str(tmp_path / "in"), "--output",
            str(tmp_path / "out"), "--processes", "1", "--quiet",
            "--validation-documents", "1", "--shard-tokens", "12"]
    assert cli.main(argv) == 0
    out = capsys.readouterr().out
    assert "3 documents" in out and "+1 validation documents" in out
    assert cli.main(argv) == 0
    assert "is up to date" in capsys.readouterr().out
    assert cli.main(["prepare-corpus", BERT, str(tmp_path / "nope"),
                     "--output", str(tmp_path / "o2")]) == 1
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"kzoo prepare-corpus: error: {tmp_path / 'nope'} does "
                   "not exist. Check the path (a file, a folder or a glob "
                   "pattern)."]
    assert cli.main(["prepare-corpus", "--merge", str(tmp_path / "out")]) \
        == 1
    assert "no part manifests" in capsys.readouterr().err


# ----------------------------------------------------------------------
# Memory: peak RSS does not grow with the corpus (large: at about 1 MB/s
# of text per process, some 10 minutes)
# ----------------------------------------------------------------------
MEASURE = textwrap.dedent("""
    import resource, sys
    from kzoo.corpus import prepare_corpus
    prepare_corpus([sys.argv[1]], sys.argv[2], "bert_base_en_uncased",
                   processes=1, progress=False, shard_tokens=1 << 22)
    print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)
""")


def austen_corpus(folder, megabytes):
    """The bundled novels repeated into one `megabytes` MB file."""
    from kzoo.datasets import AUSTEN_DIR
    text = "\n\n".join(p.read_text(encoding="utf-8")
                       for p in sorted(AUSTEN_DIR.glob("*.txt")))
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "corpus.txt"
    with open(path, "w", encoding="utf-8") as f:
        written = 0
        while written < megabytes * 1e6:
            f.write(text + "\n\n")
            written += len(text.encode()) + 2
    return path


def peak_rss_mb(corpus, output):
    done = subprocess.run([sys.executable, "-c", MEASURE, str(corpus),
                           str(output)], capture_output=True, text=True,
                          check=True, env=dict(os.environ))
    return int(done.stdout.split()[-1]) / 1024


@pytest.mark.large
def test_peak_memory_does_not_grow_with_the_corpus(tmp_path):
    small = peak_rss_mb(austen_corpus(tmp_path / "s", 100), tmp_path / "os")
    big = peak_rss_mb(austen_corpus(tmp_path / "b", 400), tmp_path / "ob")
    assert big - small < 300, (small, big)
