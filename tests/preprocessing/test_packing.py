"""RoBERTa's FULL-SENTENCES packing, on Austen's chapters (documents) with
the RoBERTa tokenizer; then fed to RobertaMaskedLM.fit."""

import functools

import keras
import numpy as np
import pytest
import tensorflow as tf

import kzoo
from helpers import AUSTEN_NOVELS, austen_chapters, to_numpy
from kzoo.preprocessing import pack_full_sentences, split_sentences
from roberta_testing import ROBERTA_PRESET, make_tiny_roberta

SEQ = 64
# Long enough for Austen's longest sentence (108 tokens): none is cut.
LONG_SEQ = 128
BOS, PAD, EOS = 0, 1, 2  # RoBERTa's <s>, <pad>, </s>


@functools.lru_cache(maxsize=None)
def chapters():
    return tuple(c for novel in AUSTEN_NOVELS for c in austen_chapters(novel))


@functools.lru_cache(maxsize=None)
def packed_rows():
    tokenizer = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    rows = kzoo.preprocessing.full_sentences(chapters(), tokenizer,
                                             LONG_SEQ)
    rows = [to_numpy(row) for row in rows]
    # Each sentence as its chapter's running text tokenizes it: after the
    # first, led by the space before it (byte-level BPE's "\u0120" token;
    # tokenized alone, a sentence would begin with a token running text
    # never has there, and this reference used to expect that).
    sentences = []
    for chapter in chapters():
        pieces = split_sentences(chapter, min_words=1)
        pieces = pieces[:1] + [" " + piece for piece in pieces[1:]]
        sentences.append([list(ids) for ids in tokenizer.tokenize(pieces)])
    return rows, sentences


@pytest.mark.once
def test_rows_are_full_sentences_from_consecutive_documents():
    rows, documents = packed_rows()
    assert all(row["token_ids"].shape == (LONG_SEQ,) for row in rows)
    stream = []  # what the rows hold, <s>/</s>/padding removed
    capacity = LONG_SEQ - 2
    fill = []
    for row in rows:
        ids = row["token_ids"][row["padding_mask"] == 1]
        assert ids[0] == BOS and ids[-1] == EOS
        assert (row["token_ids"][row["padding_mask"] == 0] == PAD).all()
        assert row["padding_mask"][:len(ids)].all()  # padding at the end
        content = list(ids[1:-1])
        assert content and content[0] != EOS and content[-1] != EOS
        stream.append(content)
        fill.append(len(content) / capacity)

    # Expected: the sentences in corpus order, </s> between documents,
    # every row boundary at a sentence boundary. Rebuild the rows from the
    # sentences, greedily: each row ends where the next sentence would not
    # fit, and never inside a sentence.
    pieces = []  # (tokens, document boundary before it)
    for d, document in enumerate(documents):
        for s, sentence in enumerate(document):
            assert len(sentence) <= capacity  # no sentence is cut here
            pieces.append((sentence, d > 0 and s == 0))
    rebuilt, row = [], []
    for sentence, new_document in pieces:
        needed = len(sentence) + (1 if new_document and row else 0)
        if row and len(row) + needed > capacity:
            rebuilt.append(row)
            row = []
        if new_document and row:
            row.append(EOS)
        row.extend(sentence)
    rebuilt.append(row)
    assert stream == rebuilt
    # The separators: one per document boundary inside a row.
    separators = sum(r.count(EOS) for r in stream)
    assert 0 < separators < len(documents)
    # Rows are full: FULL-SENTENCES wastes only the tail of each row.
    assert np.mean(fill[:-1]) > 0.8, np.mean(fill)
    # Each chapter's sentences, put together, are its running text's
    # tokens.
    tokenizer = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    running = tokenizer.tokenize([" ".join(split_sentences(c, min_words=1))
                                  for c in chapters()])
    for document, ids in zip(documents, running, strict=True):
        assert sum(document, []) == [int(t) for t in ids]


@pytest.mark.once
def test_packing_by_hand():
    documents = [[[11, 12], [13]], [[14, 15, 16]], [], [[17], [18] * 9]]
    rows = list(pack_full_sentences(documents, 7, BOS, EOS, PAD))
    # Capacity 5: [11 12 13 </s>] and [14 15 16] do not fit together, so
    # the document boundary is the row's own </s>; 17 follows 16 after a
    # separator; the 9-token sentence fills a row of its own and its last
    # 4 ids go on in the next (none is lost).
    assert [list(r[0]) for r in rows] == [
        [BOS, 11, 12, 13, EOS, PAD, PAD],
        [BOS, 14, 15, 16, EOS, 17, EOS],
        [BOS, 18, 18, 18, 18, 18, EOS],
        [BOS, 18, 18, 18, 18, EOS, PAD],
    ]
    assert [list(r[1]) for r in rows][0] == [1, 1, 1, 1, 1, 0, 0]
    with pytest.raises(ValueError, match="sequence_length must be"):
        list(pack_full_sentences(documents, 2, BOS, EOS, PAD))


@pytest.mark.once
def test_sentences_are_tokenized_as_running_text():
    # GPT-2's real BPE (the stand-in preset's vocab.json and merges.txt
    # are GPT-2's, in RoBERTa's ids): in running text every sentence after
    # the first follows a space, which byte-level BPE spells into the
    # sentence's first token ("\u0120We", not "We"). fairseq's RoBERTa
    # data is running text encoded whole, so a packed sentence after the
    # first must begin with the \u0120 token, as the running text has it.
    tokenizer = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    documents = ["It rained all day. We stayed in. Nobody came.",
                 ["The end came at last.", "We were glad."]]
    running = ["It rained all day. We stayed in. Nobody came.",
               "The end came at last. We were glad."]
    rows = [to_numpy(row)["token_ids"] for row in
            kzoo.preprocessing.full_sentences(documents, tokenizer, 64)]
    assert len(rows) == 1
    content = [int(t) for t in rows[0][1:] if t not in (BOS, PAD)][:-1]
    # One document after the other, </s> between: each the running text.
    expected = [list(ids) for ids in tokenizer.tokenize(running)]
    assert content == expected[0] + [EOS] + expected[1]
    tokens = [tokenizer.id_to_token(t) for t in content]
    # Sentences after the first: "\u0120We", "\u0120Nobody"; a
    # document's first sentence starts without one ("The").
    assert tokens[tokens.index(".") + 1] == "\u0120We"
    assert "\u0120Nobody" in tokens and "Nobody" not in tokens
    assert tokens[tokens.index("</s>") + 1] == "The"
    assert tokens.count("\u0120We") == 2 and "We" not in tokens

    # A row that begins inside a document begins with the running text's
    # token too (fairseq's blocks cut the encoded text where they cut it).
    rows = [to_numpy(row)["token_ids"] for row in
            kzoo.preprocessing.full_sentences(documents[:1], tokenizer, 8)]
    firsts = [tokenizer.id_to_token(int(row[1])) for row in rows]
    assert firsts == ["It", "\u0120We", "\u0120Nobody"]


@pytest.mark.convergence
def test_packed_rows_train_a_roberta_masked_lm():
    tokenizer = kzoo.RobertaTokenizer.from_preset(ROBERTA_PRESET)
    preprocessor = kzoo.RobertaMaskedLMPreprocessor.from_preset(
        ROBERTA_PRESET, sequence_length=SEQ)
    rows = kzoo.preprocessing.full_sentences(chapters(), tokenizer, SEQ)
    dataset = rows.cache().batch(16, drop_remainder=True).map(
        preprocessor.mask)
    task = kzoo.RobertaMaskedLM(make_tiny_roberta(), preprocessor=None)
    task.compile(optimizer=keras.optimizers.AdamW(learning_rate=3e-3))
    history = task.fit(dataset.repeat(), steps_per_epoch=5, epochs=5,
                       shuffle=False, verbose=0)
    losses = history.history["loss"]
    assert all(np.isfinite(losses)), losses
    assert all(np.diff(losses) < 0), losses
    assert losses[-1] < 0.88 * losses[0], losses
    x, y, weights = next(iter(dataset))
    assert x["token_ids"].shape == (16, SEQ)
    assert tf.reduce_sum(weights) > 16 * 5
