"""The SentencePiece base tokenizer on real models (sentencepiece's own
test models, trained on Botchan; see tests/data/README.md): the same ids
and text as the `sentencepiece` library, eagerly and in tf.data; special
tokens kept whole; a family's own id numbering; the word-start table; its
file travelling through Keras' safe-mode deserialization."""

import json
import shutil
from pathlib import Path

import keras
import pytest
import sentencepiece
import tensorflow as tf

from kzoo.core.sentencepiece_tokenizer import SentencePieceTokenizer
from kzoo.core.tokenizer import TokenizerAssetError

# Tokenizers and text checks run in tf whatever the backend (the
# registry-wide contracts check each backend's eager outputs).
pytestmark = pytest.mark.once

SPM = Path(__file__).resolve().parent.parent / "data" / "spm"
MODELS = {"unigram": SPM / "botchan_en_unigram_1000.model",
          "bpe": SPM / "botchan_en_bpe_1000.model"}

TEXTS = [
    "Hello world",
    "I was born in Tokyo, and my father was a samurai.",
    "   whitespace    runs   between  words   ",
    "Ünïcödé: café, naïve, résumé, Ångström",
    "日本語のテキスト and 中文 mixed in",
    "emoji 🙂 👨‍👩‍👧 🇫🇷 flags",
    "tabs\tand\nnewlines\r\nhere",
    "a\x00nul and <s> typed",
    "",
    " ",
]


@keras.saving.register_keras_serializable(package="kzoo_tests")
class OffsetTokenizer(SentencePieceTokenizer):
    """A family numbering of its own: `<pad>` first, the pieces shifted by
    one, `<mask>` last; `<pad>`, `<mask>` and the model's `<s>`/`</s>`
    typed in a text are kept whole."""

    special_tokens = ("<pad>", "<mask>", "<s>", "</s>")

    def family_vocabulary(self, pieces):
        return ["<pad>", *pieces, "<mask>"]


@pytest.fixture(scope="module", params=sorted(MODELS))
def kind(request):
    return request.param


@pytest.fixture(scope="module")
def reference(kind):
    return sentencepiece.SentencePieceProcessor(model_file=str(MODELS[kind]))


@pytest.fixture(scope="module")
def tokenizer(kind):
    return SentencePieceTokenizer(MODELS[kind])


def test_same_ids_and_text_as_sentencepiece(tokenizer, reference):
    expected = reference.encode(TEXTS)
    assert tokenizer(TEXTS) == expected
    for text, ids in zip(TEXTS, expected):
        assert tokenizer.detokenize(ids) == reference.decode(ids), text
    assert tokenizer.vocabulary_size == reference.get_piece_size() == 1000
    assert tokenizer.get_vocabulary()[:3] == ["<unk>", "<s>", "</s>"]


def test_same_in_tf_data(tokenizer, reference):
    dataset = tf.data.Dataset.from_tensor_slices(TEXTS).batch(len(TEXTS))
    ids = next(iter(dataset.map(tokenizer)))
    assert ids.to_list() == reference.encode(TEXTS)
    texts = next(iter(dataset.map(
        lambda t: tokenizer.detokenize(tokenizer.tokenize_tf(t)))))
    assert [t.decode() for t in texts.numpy()] == \
        reference.decode(reference.encode(TEXTS))


def test_round_trip_of_text_in_the_vocabulary(tokenizer):
    text = "I was born in Tokyo, and my father was a samurai."
    assert tokenizer.detokenize(tokenizer(text)) == text
    assert tokenizer.detokenize(tokenizer([text, "Hello world"])) == \
        [text, "Hello world"]


def test_word_start_table(tokenizer, reference):
    table = tokenizer.word_start_table()
    assert table.dtype == bool and table.shape == (1000,)
    pieces = tokenizer.get_vocabulary()
    for i, piece in enumerate(pieces):
        control = reference.is_control(i) or reference.is_unknown(i)
        assert table[i] == (piece.startswith("\u2581") or control), piece
    ids = tokenizer("Hello wonderful world")
    words = [pieces[i] for i, start in zip(ids, table[ids]) if start]
    assert len(words) == 3
    # A copy: changing it changes nothing in the tokenizer.
    table[:] = False
    assert tokenizer.word_start_table().any()


def test_family_numbering_and_special_tokens(kind, reference):
    tokenizer = OffsetTokenizer(MODELS[kind])
    assert tokenizer.vocabulary_size == 1002
    assert (tokenizer.token_to_id("<pad>"), tokenizer.token_to_id("<mask>"),
            tokenizer.token_to_id("<s>")) == (0, 1001, 2)
    assert tokenizer.token_to_id("no such piece") == 1  # the model's <unk>
    text = "The <mask> sat.<s>a</s> <pad>"
    parts = ["The ", "<mask>", " sat.", "<s>", "a", "</s>", " ", "<pad>"]
    expected = []
    for part in parts:
        if part in OffsetTokenizer.special_tokens:
            expected.append(tokenizer.token_to_id(part))
        else:
            expected.extend(i + 1 for i in reference.encode(part))
    assert tokenizer([text])[0] == expected
    dataset = tf.data.Dataset.from_tensor_slices([text, "x"]).batch(2)
    assert next(iter(dataset.map(tokenizer))).to_list()[0] == expected
    # The family's own tokens are no text; the model's pieces decode back.
    assert tokenizer.detokenize(expected) == reference.decode(
        [i - 1 for i in expected if 0 < i < 1001])
    table = tokenizer.word_start_table()
    assert table[0] and table[1001] and table[2] and table.shape == (1002,)
    assert tokenizer.id_to_token(1001) == "<mask>"
    with pytest.raises(ValueError, match=r"token id 1002 is outside the "
                                         r"vocabulary \[0, 1001\]"):
        tokenizer.id_to_token(1002)


def test_ragged_text_keeps_its_rows():
    tokenizer = OffsetTokenizer(MODELS["unigram"])
    texts = tf.ragged.constant([["Hello world", "<mask>"], ["x"]])
    ids = tokenizer.tokenize_tf(texts)
    assert ids.to_list() == [[tokenizer(["Hello world"])[0], [1001]],
                             [tokenizer(["x"])[0]]]


def test_deserializes_in_safe_mode_with_its_file(tmp_path):
    tokenizer = OffsetTokenizer(MODELS["unigram"])
    config = keras.saving.serialize_keras_object(tokenizer)
    assert str(MODELS["unigram"]) not in json.dumps(config)
    assets = tmp_path / "assets"
    assets.mkdir()
    tokenizer.save_assets(assets)
    assert (assets / "spiece.model").read_bytes() == \
        MODELS["unigram"].read_bytes()
    rebuilt = keras.saving.deserialize_keras_object(config, safe_mode=True)
    with pytest.raises(TokenizerAssetError, match="has no `spiece.model` "
                                                  "yet"):
        rebuilt(["text"])
    rebuilt.load_assets(assets)
    shutil.rmtree(assets)  # as Keras does: the tokenizer keeps a copy
    assert rebuilt(TEXTS) == tokenizer(TEXTS)


@pytest.mark.parametrize("content, phrase", [
    (b"", "is empty"),
    (b"\x89PNG\r\n\x1a\n\xff\xfe\x00\x01", "not a SentencePiece model"),
])
def test_bad_model_file(content, phrase, tmp_path):
    bad = tmp_path / "spiece.model"
    bad.write_bytes(content)
    with pytest.raises(TokenizerAssetError, match=phrase) as error:
        SentencePieceTokenizer(bad)
    assert str(bad) in str(error.value)


def test_family_vocabulary_must_hold_the_special_tokens():
    class Lacking(OffsetTokenizer):
        def family_vocabulary(self, pieces):
            return list(pieces)  # no <pad>, no <mask>
    with pytest.raises(TokenizerAssetError,
                       match="lacks the special tokens '<pad>', '<mask>'"):
        Lacking(MODELS["unigram"])


def test_reading_a_model_is_linear_in_its_vocabulary(monkeypatch):
    """The asset read once built `set(pieces)` for every vocabulary entry:
    quadratic, 8.1 s for a 16,000-piece model (0.3 s now), so about half
    an hour for XLM-R's 250,002 by extrapolation. Counted, not timed: a
    few sets per read, not one per piece."""
    from kzoo.core import sentencepiece_tokenizer as module
    made = []

    def counting_set(*args):
        made.append(1)
        return set(*args)
    monkeypatch.setattr(module, "set", counting_set, raising=False)
    OffsetTokenizer(MODELS["unigram"])("Hello world")
    assert 0 < len(made) < 10, len(made)
