"""`kzoo train-tokenizer` / `kzoo.tokenizer_training.train_tokenizer`: a
family's vocabulary trained on text, written as a preset.

Checked against the reference: each trained vocabulary is read by the
family's own `transformers` tokenizer, which must give kzoo's ids and
special-token ids on English and on Chinese, Japanese and Korean text
(tests/data/cjk). Training and tokenizing run no backend op, so every
test runs once per suite."""

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import tensorflow as tf

import kzoo
from kzoo import cli, presets
from kzoo.corpus import prepare_corpus
from kzoo.tokenizer_training import TokenizerTrainingError, train_tokenizer
from helpers import golden_cases, id_lists

pytestmark = pytest.mark.once

DATA = Path(__file__).resolve().parent.parent / "data"
AUSTEN = sorted((DATA / "austen").glob("*.txt"))
CJK = sorted((DATA / "cjk").glob("*.txt"))
CJK_LINES = [line.strip() for path in CJK
             for line in path.read_text(encoding="utf-8").splitlines()
             if line.strip()]
# Text no vocabulary was trained on: other novels, Cyrillic, Khmer, emoji,
# whitespace runs (llama.cpp's tokenizer cases).
UNSEEN = [text for text, _ in golden_cases("ggml-vocab-gpt-2.gguf")] + \
    kzoo.datasets.austen_paragraphs("persuasion")[:8]
VOCABULARY_SIZE = 1200
SENTENCEPIECE_FAMILIES = ("albert", "t5", "xlm_roberta", "deberta_v3")

# family, kind -> the ids the family's released vocabularies give its
# special tokens (as transformers' tokenizers name them); -1: the last id.
TRAINED = {
    ("bert", None): {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4},
    ("roberta", None): {"bos": 0, "pad": 1, "eos": 2, "unk": 3, "mask": -1},
    ("gpt2", None): {"eos": -1},
    ("albert", None): {"pad": 0, "unk": 1, "cls": 2, "sep": 3, "mask": 4},
    ("albert", "sentencepiece-bpe"): {"pad": 0, "unk": 1, "cls": 2,
                                      "sep": 3, "mask": 4},
    ("t5", None): {"pad": 0, "eos": 1, "unk": 2},
    ("xlm_roberta", None): {"bos": 0, "pad": 1, "eos": 2, "unk": 3,
                            "mask": -1},
    ("deberta_v3", None): {"pad": 0, "cls": 1, "sep": 2, "unk": 3,
                           "mask": -1},
}


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """Each family's vocabulary, trained on two Austen excerpts and the
    CJK texts: (family, kind) -> the preset folder."""
    root = tmp_path_factory.mktemp("trained")
    folders = {}
    for family, kind in TRAINED:
        folder = root / f"{family}_{kind or 'own'}"
        train_tokenizer(family, [*AUSTEN, DATA / "cjk"], folder,
                        VOCABULARY_SIZE, kind=kind)
        folders[family, kind] = folder
    return folders


def _reference(family, folder, scratch):
    """The family's `transformers` tokenizer, reading the trained files."""
    import transformers
    transformers.logging.set_verbosity_error()
    if family == "bert":
        return transformers.BertTokenizerFast(str(folder / "vocab.txt"),
                                              do_lower_case=True)
    if family == "roberta":
        return transformers.RobertaTokenizerFast(
            str(folder / "vocab.json"), str(folder / "merges.txt"))
    if family == "gpt2":
        return transformers.GPT2Tokenizer(vocab=str(folder / "vocab.json"),
                                          merges=str(folder / "merges.txt"))
    # SentencePiece families: from the model file alone, in a folder of
    # its own (kzoo's tokenizer.json is not transformers').
    cls, filename = {
        "albert": ("AlbertTokenizer", "spiece.model"),
        "t5": ("T5Tokenizer", "spiece.model"),
        "xlm_roberta": ("XLMRobertaTokenizer", "sentencepiece.bpe.model"),
        "deberta_v3": ("DebertaV2Tokenizer", "spm.model")}[family]
    shutil.copyfile(folder / filename, scratch / filename)
    return getattr(transformers, cls).from_pretrained(str(scratch))


@pytest.mark.parametrize("family,kind", list(TRAINED))
def test_vocabulary_is_the_familys_as_its_own_tokenizer_reads_it(
        trained, family, kind, tmp_path):
    folder = trained[family, kind]
    tokenizer = kzoo.Tokenizer.from_preset(folder)
    size = tokenizer.vocabulary_size
    assert size == VOCABULARY_SIZE
    reference = _reference(family, folder, tmp_path)
    assert len(reference) == size
    for name, expected in TRAINED[family, kind].items():
        token_id = getattr(reference, f"{name}_token_id")
        assert token_id == (size - 1 if expected == -1 else expected), name
        assert getattr(tokenizer, f"{name}_token_id", token_id) == token_id
    if family == "t5":
        assert tokenizer.sentinel_id(0) == size - 1
        assert reference.convert_tokens_to_ids("<extra_id_0>") == size - 1
    english = kzoo.datasets.austen_paragraphs("emma")[:6]
    if kind == "sentencepiece-bpe":
        # transformers reads an ALBERT model as the released ones are
        # (unigram): the pieces are compared with SentencePiece's own.
        import sentencepiece
        model = sentencepiece.SentencePieceProcessor(
            model_file=str(folder / "spiece.model"))
        for text in english:
            ids = id_lists(tokenizer.tokenize(text))
            assert [tokenizer.id_to_token(i) for i in ids] == model.encode(
                text.lower(), out_type=str), text
    else:
        # transformers' SentencePiece tokenizers are converted to its own
        # normalisers, which differ from SentencePiece's on CJK text
        # (after ALBERT's NFKD, Hangul comes back as <unk>; DeBERTa's
        # full-width brackets): those families are compared on English.
        texts = english + (
            [] if family in SENTENCEPIECE_FAMILIES else CJK_LINES)
        for text in texts:
            assert id_lists(tokenizer.tokenize(text)) == reference.encode(
                text, add_special_tokens=False), text
    # The non-Latin script has tokens of its own, not the unknown token.
    cjk_ids = sum(id_lists(tokenizer.tokenize(CJK_LINES)), [])
    assert getattr(tokenizer, "unk_token_id", -1) not in cjk_ids
    config = presets.resolve(folder).json("config.json")["config"]
    assert config["vocabulary_size"] == size
    if "pad_token_id" in config:
        assert config["pad_token_id"] == reference.pad_token_id


@pytest.mark.parametrize("family,kind", list(TRAINED))
def test_graph_and_eager_tokenization_agree(trained, family, kind):
    tokenizer = kzoo.Tokenizer.from_preset(trained[family, kind])
    texts = UNSEEN + CJK_LINES
    eager = id_lists(tokenizer.tokenize(texts))
    dataset = tf.data.Dataset.from_tensor_slices(texts).batch(len(texts))
    in_graph = id_lists(next(iter(dataset.map(tokenizer.tokenize_tf))))
    assert in_graph == eager
    # And back: the English text comes back as the tokenizer reads it.
    english = UNSEEN[-1]
    back = tokenizer.detokenize(tokenizer.tokenize(english))
    if not getattr(tokenizer, "lowercase", False):
        assert " ".join(back.split()) == " ".join(english.split())


def _austen_folder(tmp_path, lines=400):
    texts = tmp_path / "texts"
    texts.mkdir()
    for path in AUSTEN:
        (texts / path.name).write_text(
            "\n".join(path.read_text(encoding="utf-8").splitlines()[:lines]),
            encoding="utf-8")
    return texts


def _run(capsys, *argv):
    code = cli.main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return code, out, err


def test_trained_preset_prepares_a_corpus_pretrains_and_fine_tunes(
        tmp_path, capsys):
    """The round trip a user makes: train a vocabulary, prepare a corpus
    with it, pretrain from scratch, build a classifier on it; then train
    again from the prepared corpus, which reads the same text."""
    texts = _austen_folder(tmp_path)
    preset = tmp_path / "austen_bert"
    code, out, err = _run(capsys, "train-tokenizer", "bert", texts,
                          "--output", preset, "--vocab-size", "1000")
    assert code == 0, err
    assert "1,000-token wordpiece vocabulary" in out
    corpus = tmp_path / "corpus"
    prepare_corpus(texts, corpus, str(preset), processes=1, progress=False)
    run = tmp_path / "run"
    code, out, err = _run(capsys, "pretrain", preset, corpus, run,
                          "--from-scratch", "--objective", "mlm",
                          "--max-steps", "2", "--sequence-length", "16",
                          "--batch-size", "4", "--quiet")
    assert code == 0, err
    pretrained = kzoo.BertBackbone.from_preset(run / "preset")
    assert pretrained.vocabulary_size == 1000
    classifier = kzoo.BertTextClassifier.from_preset(
        preset, num_classes=2, load_weights=False)
    assert classifier.predict(["It is a truth."], verbose=0).shape == (1, 2)

    again = tmp_path / "from_corpus"
    train_tokenizer("bert", corpus, again, 1000)
    assert (again / "vocab.txt").read_bytes() == \
        (preset / "vocab.txt").read_bytes()
    metadata = presets.resolve(again).metadata
    assert metadata["base_preset"] == "bert_tiny_en_uncased"
    assert metadata["tokenizer_training"]["inputs"] == [
        str(p.resolve()) for p in sorted(texts.iterdir())]


@pytest.fixture(scope="module")
def small_text(tmp_path_factory):
    path = tmp_path_factory.mktemp("small") / "small.txt"
    path.write_text("\n".join(AUSTEN[0].read_text(
        encoding="utf-8").splitlines()[:150]), encoding="utf-8")
    return path


def _empty(tmp_path):
    (tmp_path / "empty.txt").write_text("\n\n  \n")
    return tmp_path / "empty.txt"


@pytest.mark.parametrize("family,size,options,inputs,message", [
    ("bert", 40, {}, None, "below the alphabet"),
    ("gpt2", 200, {}, None, "the byte tokens and special tokens alone take "
     "257"),
    ("albert", 40, {}, None, "SentencePiece cannot train"),
    ("bert", 5, {}, None, "leaves no room beside the family's 5 special"),
    ("bert", 2 ** 31, {}, None, "more ids than int32"),
    ("bert", 1000.0, {}, None, "must be a whole number"),
    ("bert", 100_000, {}, None, "The text yields only"),
    ("albert", 100_000, {}, None, "SentencePiece cannot train"),
    ("bert", 1000, {}, _empty, "hold no text"),
    ("bret", 1000, {}, None, "Unknown family 'bret'"),
    ("bert", 1000, {"kind": "sentencepiece-bpe"}, None,
     "reads wordpiece vocabularies only"),
    ("elmo", 1000, {}, None, "has no trainable subword vocabulary"),
    ("bert", 1000, {"from_preset": "gpt2"}, None, "not a bert one"),
])
def test_bad_input_is_refused_and_nothing_is_written(
        tmp_path, small_text, family, size, options, inputs, message):
    output = tmp_path / "out"
    with pytest.raises(TokenizerTrainingError, match=message):
        train_tokenizer(family, inputs(tmp_path) if inputs else small_text,
                        output, size, **options)
    assert not output.exists()
    assert not [p for p in tmp_path.iterdir() if ".staging-" in p.name]


def test_an_existing_preset_is_replaced_only_when_asked(
        tmp_path, small_text, capsys):
    output = tmp_path / "out"
    train_tokenizer("bert", small_text, output, 300)
    before = (output / "vocab.txt").read_bytes()
    code, _, err = _run(capsys, "train-tokenizer", "bert", small_text,
                        "-o", output, "--vocab-size", "310")
    assert code == 1 and err.count("\n") == 1
    assert "already holds a preset; pass overwrite=True" in err
    assert (output / "vocab.txt").read_bytes() == before
    train_tokenizer("bert", small_text, output, 310, overwrite=True)
    assert len((output / "vocab.txt").read_text().splitlines()) == 310
    assert json.loads((output / "config.json").read_text())[
        "config"]["vocabulary_size"] == 310
    assert np.all(kzoo.BertTokenizer.from_preset(output).word_start_table()[
        :5])
