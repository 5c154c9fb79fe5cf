"""WordPiece's word-length limit counts characters, as BERT's: a word of
up to 100 characters is split into pieces whatever its size in bytes, a
longer one is one [UNK] (`max_input_chars_per_word`). Compared with
Hugging Face's `BertTokenizer` and `BertTokenizerFast` on words of 2-byte
(Cyrillic, Greek) and 3-byte (Devanagari, Hangul, kana) scripts, cased and
uncased, eagerly and in `tf.data`."""

import unicodedata

import numpy as np
import pytest
import tensorflow as tf
import transformers

import kzoo

SPECIALS = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
SCRIPTS = {
    "cyrillic": "абвгдежзиклмнопрстуфхцчшщыэюя",   # 2 bytes a character
    "greek": "αβγδεζηθικλμνξοπρστυφχψω",
    "devanagari": "कखगघचछजझटठडढणतथदधनपफबभमयरलवशसह",  # 3 bytes
    "hangul": "한국어문장입니다가나다라마바사",
    "kana": "あいうえおかきくけこさしすせそアイウエオカキクケコ",
    "cjk": "中文字词语句",  # ideographs: BERT makes each a word
}
# 34 characters of a 3-byte script are 102 bytes: past keras-hub's 100-byte
# limit, within BERT's 100 characters; 101 characters are past both.
LENGTHS = (34, 60, 100, 101)


def word(script, length):
    return (SCRIPTS[script] * 10)[:length]


def texts():
    found = []
    for script in SCRIPTS:
        for length in LENGTHS:
            found.append(f"ab {word(script, length)}, {word(script, 5)}!")
    found.append(f"[MASK] {word('devanagari', 40)} [MASK]")
    return found


@pytest.fixture(scope="module")
def vocabulary(tmp_path_factory):
    """Each character alone and as a continuation (Hangul's NFD jamo too:
    uncased BERT decomposes it), and a few longer pieces, so the greedy
    longest match has choices."""
    characters = set("".join(SCRIPTS.values())) | set("ab,!")
    characters |= set(unicodedata.normalize("NFD", SCRIPTS["hangul"]))
    characters = sorted(characters)
    longer = ["абв", "##где", "कखग", "##घच", "한국", "##어문", "あい", "##うえ"]
    tokens = SPECIALS + characters + ["##" + c for c in characters] + longer
    path = tmp_path_factory.mktemp("wordpiece") / "vocab.txt"
    path.write_text("".join(t + "\n" for t in tokens), encoding="utf-8")
    return str(path)


@pytest.mark.parametrize("lowercase", [False, True])
def test_long_words_match_transformers(vocabulary, lowercase):
    slow = transformers.BertTokenizer(vocabulary, do_lower_case=lowercase)
    fast = transformers.BertTokenizerFast(vocabulary,
                                          do_lower_case=lowercase)
    inputs = texts()
    expected = [slow.convert_tokens_to_ids(slow.tokenize(t)) for t in inputs]
    assert expected == fast(inputs, add_special_tokens=False)["input_ids"]
    unknown = slow.convert_tokens_to_ids("[UNK]")
    # The cases that matter: a 34-100 character word of a 3-byte script
    # is split (no [UNK]); a 101-character one is a single [UNK].
    devanagari = inputs.index(f"ab {word('devanagari', 34)}, "
                              f"{word('devanagari', 5)}!")
    assert unknown not in expected[devanagari]
    assert expected[devanagari + 3].count(unknown) == 1

    tokenizer = kzoo.BertTokenizer(vocabulary=vocabulary,
                                   lowercase=lowercase)
    assert tokenizer(inputs) == expected
    assert np.asarray(tokenizer(inputs[5])).tolist() == expected[5]
    graph = tf.data.Dataset.from_tensor_slices(inputs).batch(4).map(
        tokenizer.tokenize_tf)
    assert [row for batch in graph for row in batch.to_list()] == expected
