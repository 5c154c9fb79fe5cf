"""Text kept whole (kzoo/corpus/sources.py, `split_sentences`): the input's
lines honoured as BERT's one-sentence-per-line input, paragraphs split
at the sentence ends of every script (checked on real translated text),
and a causal LM's corpus kept with every newline and indent."""

import json
from pathlib import Path

import pytest

from kzoo.corpus import Corpus, CorpusError, prepare_corpus
from kzoo.core.tokenizer import Tokenizer
from kzoo.preprocessing.sentence_pairs import split_sentences

pytestmark = pytest.mark.once

MESSAGES = json.loads(
    (Path(__file__).parents[1] / "data" / "multilingual" /
     "messages.json").read_text(encoding="utf-8"))
LANGUAGES = ("zh_CN", "ja", "ne", "ar")


def _english_count(message):
    """The reference: how many sentences the English original has."""
    return len(split_sentences(message["msgid"], min_words=1))


def _prepare(inputs, output, tokenizer, **kwargs):
    return prepare_corpus(inputs, output, tokenizer, processes=1,
                          progress=False, validation_documents=0, **kwargs)


@pytest.mark.parametrize("language", LANGUAGES)
def test_sentences_end_at_each_scripts_own_punctuation(language):
    """Each translation splits into as many sentences as its English
    original; the translations joined (no space: Chinese and Japanese
    put none) split into all of them, each kept verbatim."""
    messages = [m for m in MESSAGES if m["language"] == language]
    assert len(messages) == 4
    for message in messages:
        got = split_sentences(message["msgstr"], min_words=1)
        assert len(got) == _english_count(message), got
        assert "".join(got).replace(" ", "") == \
            message["msgstr"].replace(" ", "")
    joined = "".join(m["msgstr"] for m in messages)
    assert len(split_sentences(joined, min_words=1)) == sum(
        _english_count(m) for m in messages)


def test_min_words_counts_han_and_kana_characters():
    assert split_sentences("密码已使用。请选择其他密码。", min_words=6) == [
        "请选择其他密码。"]
    # Closing quotes stay with their sentence (the old rule dropped
    # them); "3.5" is no sentence end; punctuation alone is no word.
    assert split_sentences('He said "Stop." Then 3.5 days passed! * * *',
                           min_words=1) == ['He said "Stop."',
                                            "Then 3.5 days passed!"]
    assert split_sentences("Yes. * * *", min_words=0) == ["Yes.", "* * *"]


def test_lines_paragraphs_and_raw_text(tmp_path):
    bert = Tokenizer.from_preset("bert_tiny_en_uncased")
    text = ("It rained all day\nwe stayed in. The fire was low.\n\n"
            "A new document! Is it? Yes.\n")
    (tmp_path / "a.txt").write_text(text, encoding="utf-8")

    def sentences(folder):
        corpus = Corpus(folder)
        return [[bert.detokenize([s.tolist()]) for s in
                 corpus.document(d)] for d in range(corpus.num_documents)]

    # Default for blank-line documents: one sentence a line (BERT's).
    _prepare([tmp_path / "a.txt"], tmp_path / "lines", bert)
    assert [len(d) for d in sentences(tmp_path / "lines")] == [2, 1]
    # Paragraph input: running text split at sentence ends.
    _prepare([tmp_path / "a.txt"], tmp_path / "paragraphs", bert,
             text="paragraphs")
    assert [len(d) for d in sentences(tmp_path / "paragraphs")] == [2, 3]
    assert Corpus(tmp_path / "paragraphs").manifest["options"]["text"] \
        == "paragraphs"
    with pytest.raises(CorpusError, match="text must be one of"):
        _prepare([tmp_path / "a.txt"], tmp_path / "x", bert, text="words")


def test_raw_text_keeps_newlines_and_indentation_for_gpt2(tmp_path):
    gpt2 = Tokenizer.from_preset("gpt2_base_en")
    code = ("def area(width, height):\n"
            "    \"\"\"The area.\"\"\"\n"
            "\n"
            "    return width * height\n"
            "\n"
            "\n"
            "print(area(2, 3))  # 6")
    poem = "Roses are red,\n  violets are blue;\n\tsugar is sweet."
    (tmp_path / "code.txt").write_text(code + "\n", encoding="utf-8")
    (tmp_path / "poem.txt").write_text(poem + "\n", encoding="utf-8")
    _prepare([tmp_path], tmp_path / "out", gpt2, documents="files",
             text="raw")
    corpus = Corpus(tmp_path / "out")
    for index, original in enumerate([code, poem]):
        ids = corpus.document_tokens(index).tolist()
        # The ids of the text as it is, which detokenize back to it.
        assert ids == [int(t) for t in gpt2.tokenize([original])[0]]
        assert gpt2.detokenize([ids]) == [original]


def test_a_multilingual_book_is_split_into_its_sentences(tmp_path):
    """A `documents="files"` book of real translated paragraphs: one
    sentence per sentence of the English originals (the old splitter
    made each Chinese, Japanese or Nepali paragraph one sentence)."""
    bert = Tokenizer.from_preset("bert_tiny_en_uncased")
    book = "\n\n".join(m["msgstr"] for m in MESSAGES)
    (tmp_path / "book.txt").write_text(book + "\n", encoding="utf-8")
    _prepare([tmp_path / "book.txt"], tmp_path / "out", bert,
             documents="files")
    corpus = Corpus(tmp_path / "out")
    assert corpus.num_documents == 1
    assert len(corpus.document(0)) == sum(_english_count(m)
                                          for m in MESSAGES)
